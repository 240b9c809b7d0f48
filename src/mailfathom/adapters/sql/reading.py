"""The read side of the store: listings, lexical search, content reads and conversations.

Every method first narrows the requested folders to those that exist and are visible to
tools, in the same connection as the reads that follow, so a withheld folder cannot leak even
when a caller passes its id. Pages are found by a query over the few columns the order and
the filters need; the page's rows, participants and keywords are then read in batches by
`seq`, a constant number of queries whatever the page size.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.reading_rows import (
    BM25,
    ICU_ROOT_COLLATION,
    SQLITE_FOLD_FUNCTION,
    TextRules,
    aware,
    chunks,
    filter_clauses,
    fts5_query,
    load_bodies,
    load_indexed_bodies,
    load_participants,
    load_parts,
    load_summaries,
    python_lower,
    searchable,
    tsquery,
)
from mailfathom.adapters.sql.rows import utc
from mailfathom.adapters.sql.schema import folders, message_search, messages
from mailfathom.adapters.sql.threads import split_ids
from mailfathom.app.reading_types import (
    EmailRow,
    FolderView,
    SearchRow,
    SummaryFilter,
    SummaryRow,
    ThreadMember,
    TimelinePosition,
)
from mailfathom.domain.folders import FolderRole


@dataclass(frozen=True, slots=True)
class _Stretch:
    """Part of the timeline: the dated rows (ordered by received time, then `seq`) or the
    undated ones (by `seq`), which sort as the oldest."""

    condition: sa.ColumnElement[bool]
    dated: bool


def _stretches(newest_first: bool, after: TimelinePosition | None) -> list[_Stretch]:
    """What is left of the timeline after `after`, in reading order."""
    received, seq = messages.c.received_at, messages.c.seq
    dated: sa.ColumnElement[bool] | None = received.is_not(None)
    undated: sa.ColumnElement[bool] | None = received.is_(None)
    if after is not None and after.received_at is None:
        undated = sa.and_(received.is_(None), seq < after.seq if newest_first else seq > after.seq)
        dated = None if newest_first else dated
    elif after is not None:
        position = sa.tuple_(received, seq)
        mark = (utc(after.received_at), after.seq)
        dated = position < mark if newest_first else position > mark
        undated = undated if newest_first else None
    ordered = [(dated, True), (undated, False)]
    if not newest_first:
        ordered.reverse()
    return [
        _Stretch(condition, is_dated) for condition, is_dated in ordered if condition is not None
    ]


def _order(columns: Sequence[sa.ColumnElement[Any]], newest_first: bool) -> list[Any]:
    return [c.desc() if newest_first else c.asc() for c in columns]


class SqlMailboxReader:
    """`MailboxReadStore` on the same SQLite or PostgreSQL database `SqlStore` writes."""

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._dialect = engine.dialect.name
        self._rules: TextRules | None = None

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:
        """A connection whose reads all see one snapshot, so a page's rows, participants and
        keywords agree even while synchronization commits (SQLite's transactions already do)."""
        with self._engine.connect() as connection:
            if self._dialect == "sqlite":
                driver: Any = connection.connection.driver_connection
                driver.create_function(SQLITE_FOLD_FUNCTION, 1, python_lower, deterministic=True)
            else:
                connection.execution_options(
                    isolation_level="REPEATABLE READ", postgresql_readonly=True
                )
            yield connection

    def _text(self, connection: sa.Connection) -> TextRules:
        if self._rules is None:
            icu = False
            if self._dialect == "postgresql":
                icu = bool(
                    connection.execute(
                        sa.text("SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = :n)"),
                        {"n": ICU_ROOT_COLLATION},
                    ).scalar_one()
                )
            self._rules = TextRules(self._dialect, icu)
        return self._rules

    @staticmethod
    def _scope(connection: sa.Connection, folder_ids: Sequence[int]) -> dict[int, str]:
        """Alias of each requested folder that exists and is visible to tools."""
        wanted = sorted(set(folder_ids))
        if not wanted:
            return {}
        rows = connection.execute(
            sa.select(folders.c.folder_id, folders.c.alias).where(
                folders.c.folder_id.in_(wanted), folders.c.visible_to_tools.is_(True)
            )
        )
        return {int(folder_id): alias for folder_id, alias in rows}

    # -- folders -------------------------------------------------------------------------

    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        if not account_ids:
            return []
        with self._connect() as c:
            rows = list(
                c.execute(
                    sa.select(
                        folders.c.folder_id,
                        folders.c.account_id,
                        folders.c.alias,
                        folders.c.role,
                        folders.c.last_committed_at,
                    ).where(
                        folders.c.account_id.in_(sorted(set(account_ids))),
                        folders.c.visible_to_tools.is_(True),
                    )
                )
            )
        # Sorted here, not by the database, so both backends agree whatever their collation.
        rows.sort(key=lambda r: (r.account_id, r.alias, r.folder_id))
        return [
            FolderView(
                folder_id=int(r.folder_id),
                account_id=r.account_id,
                alias=r.alias,
                role=FolderRole(r.role) if r.role is not None else None,
                last_committed_at=aware(r.last_committed_at),
            )
            for r in rows
        ]

    # -- listings and search -------------------------------------------------------------

    def summaries(
        self,
        selection: SummaryFilter,
        *,
        newest_first: bool,
        after: TimelinePosition | None,
        limit: int,
    ) -> list[SummaryRow]:
        if limit <= 0:
            return []
        with self._connect() as c:
            scope = self._scope(c, selection.folder_ids)
            if not scope:
                return []
            filters = filter_clauses(c, selection, self._text(c))
            seqs: list[int] = []
            for stretch in _stretches(newest_first, after):
                if len(seqs) >= limit:
                    break
                query = self._page(stretch, newest_first, scope, filters, limit - len(seqs))
                seqs.extend(c.execute(query).scalars())
            loaded = load_summaries(c, seqs, scope)
        return [loaded[s].summary for s in seqs]

    def _page(
        self,
        stretch: _Stretch,
        newest_first: bool,
        scope: dict[int, str],
        filters: list[sa.ColumnElement[bool]],
        limit: int,
    ) -> sa.Select[Any]:
        """`seq` of the next rows of one stretch.

        PostgreSQL reads each folder's own index range (a LATERAL subquery per folder) and
        merges them, since it cannot merge the ranges of `folder_id IN (...)` itself and would
        otherwise sort every row in scope. SQLite sorts the covering index entries of the
        scope, which stays a few milliseconds at a hundred thousand messages."""
        keys = (messages.c.received_at, messages.c.seq) if stretch.dated else (messages.c.seq,)
        rows = sa.select(messages.c.seq, messages.c.received_at).where(stretch.condition, *filters)
        if self._dialect != "postgresql":
            return (
                rows.where(messages.c.folder_id.in_(sorted(scope)))
                .order_by(*_order(keys, newest_first))
                .limit(limit)
            )
        scoped = folders.alias("scoped")
        page = (
            rows.where(messages.c.folder_id == scoped.c.folder_id)
            .order_by(*_order(keys, newest_first))
            .limit(limit)
            .lateral("page")
        )
        merged = (page.c.received_at, page.c.seq) if stretch.dated else (page.c.seq,)
        return (
            sa.select(page.c.seq)
            .select_from(scoped.join(page, sa.true()))
            .where(scoped.c.folder_id.in_(sorted(scope)))
            .order_by(*_order(merged, newest_first))
            .limit(limit)
        )

    def search(self, selection: SummaryFilter, words: Sequence[str], limit: int) -> list[SearchRow]:
        terms = searchable(words)
        if not terms or limit <= 0:
            return []
        with self._connect() as c:
            scope = self._scope(c, selection.folder_ids)
            if not scope:
                return []
            where = [
                messages.c.folder_id.in_(sorted(scope)),
                *filter_clauses(c, selection, self._text(c)),
            ]
            hits = c.execute(self._matches(terms, where, limit)).all()
            seqs = [int(h.seq) for h in hits]
            loaded = load_summaries(c, seqs, scope)
            bodies = load_indexed_bodies(c, seqs)
        return [
            SearchRow(loaded[s].summary, float(h.rank), bodies.get(s, ""))
            for s, h in zip(seqs, hits, strict=True)
        ]

    def _matches(
        self, terms: Sequence[str], where: list[sa.ColumnElement[bool]], limit: int
    ) -> sa.Select[Any]:
        """(seq, rank) of the best matches in scope, rank higher-is-better.

        On SQLite the FTS5 match runs first, materialized with its bm25 score, because bm25
        exists only inside a full-text query and the index answers a match far faster than
        one lookup per message in scope. On PostgreSQL the planner combines the GIN index
        with the folder filter itself, and ts_rank is computed only for rows in scope."""
        newest = (messages.c.received_at.desc().nulls_last(), messages.c.seq.desc())
        if self._dialect == "postgresql":
            query = tsquery(terms)
            rank = sa.func.ts_rank(message_search.c.document, query, type_=sa.Float).label("rank")
            return (
                sa.select(messages.c.seq, rank)
                .join(message_search, message_search.c.seq == messages.c.seq)
                .where(message_search.c.document.bool_op("@@")(query), *where)
                .order_by(rank.desc(), *newest)
                .limit(limit)
            )
        hits = (
            sa.text(
                f"SELECT rowid AS seq, {BM25} AS score FROM message_fts WHERE message_fts MATCH :q"
            )
            .bindparams(q=fts5_query(terms))
            .columns(seq=sa.Integer, score=sa.Float)
            .cte("hits")
            .prefix_with("MATERIALIZED")
        )
        return (
            sa.select(messages.c.seq, (-hits.c.score).label("rank"))
            .select_from(hits.join(messages, messages.c.seq == hits.c.seq))
            .where(*where)
            .order_by(hits.c.score, *newest)
            .limit(limit)
        )

    # -- content and conversations -------------------------------------------------------

    def emails(
        self, stored_email_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, EmailRow]:
        wanted = sorted(set(stored_email_ids))
        if not wanted:
            return {}
        with self._connect() as c:
            scope = self._scope(c, folder_ids)
            if not scope:
                return {}
            seqs: list[int] = []
            for chunk in chunks(wanted):
                seqs.extend(
                    c.execute(
                        sa.select(messages.c.seq).where(
                            messages.c.stored_email_id.in_(chunk),
                            messages.c.folder_id.in_(sorted(scope)),
                        )
                    ).scalars()
                )
            loaded = load_summaries(c, seqs, scope, details=True)
            bodies = load_bodies(c, seqs)
            files = load_parts(c, seqs)
        result: dict[uuid.UUID, EmailRow] = {}
        for seq, one in loaded.items():
            plain, html = bodies.get(seq, (None, None))
            result[one.summary.stored_email_id] = EmailRow(
                summary=one.summary,
                participants=one.participants,
                in_reply_to=split_ids(one.row.in_reply_to),
                references=split_ids(one.row.references_header),
                plain_text=plain,
                html=html,
                parts=tuple(files.get(seq, ())),
                content_key=one.row.content_key,
            )
        return result

    def thread(self, thread_id: uuid.UUID, folder_ids: Sequence[int]) -> list[ThreadMember]:
        with self._connect() as c:
            scope = self._scope(c, folder_ids)
            if not scope:
                return []
            rows = c.execute(
                sa.select(
                    messages.c.seq,
                    messages.c.stored_email_id,
                    messages.c.thread_parent_seq,
                    messages.c.thread_position,
                    messages.c.subject,
                    messages.c.sent_at,
                )
                .where(messages.c.thread_id == thread_id, messages.c.folder_id.in_(sorted(scope)))
                .order_by(messages.c.thread_position.asc().nulls_last(), messages.c.seq)
            ).all()
            people = load_participants(c, [r.seq for r in rows], ("from",))
        return [
            ThreadMember(
                seq=int(r.seq),
                stored_email_id=r.stored_email_id,
                parent_seq=r.thread_parent_seq,
                position=r.thread_position,
                subject=r.subject,
                sent_at=aware(r.sent_at),
                sender_address=people[r.seq][0].address if r.seq in people else None,
            )
            for r in rows
        ]
