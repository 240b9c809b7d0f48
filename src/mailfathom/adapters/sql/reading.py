"""The read side of the store: listings, lexical search, content reads and conversations.

A request reads through one snapshot: one connection and one transaction, whose first
statement checks the folders visible to tools that the process keeps (`folder_catalog`).
Every method narrows the folders it is asked for to those, so a withheld folder cannot leak
even when a caller passes its id. Pages are found by a query over the few columns the order
and the filters need; the page's rows, participants and keywords are then read in batches by
`seq`, a constant number of queries whatever the page size. A message kept in several
folders of the scope is one row of a listing, a search or a conversation (`message_copies`).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import message_copies
from mailfathom.adapters.sql.folder_catalog import FolderCatalog
from mailfathom.adapters.sql.index_queries import index_matching, searchable
from mailfathom.adapters.sql.reading_filters import ICU_ROOT_COLLATION, RowFilters, TextRules
from mailfathom.adapters.sql.reading_rows import (
    account_per_row,
    among,
    inside,
    load_identified,
    load_parts,
    load_summaries,
)
from mailfathom.adapters.sql.reading_search import (
    CommonWords,
    Match,
    postgresql_matches,
    sqlite_matches,
    weightless_matching,
)
from mailfathom.adapters.sql.reading_texts import (
    LoadedText,
    TextSource,
    indexed,
    indexed_texts_in,
    load_texts,
)
from mailfathom.adapters.sql.reading_threads import conversation_members
from mailfathom.adapters.sql.schema import folders, messages
from mailfathom.adapters.sql.threads import split_ids
from mailfathom.adapters.sql.timeline import Stretch, ordered_by, stretches
from mailfathom.adapters.sql.vector_cache import VectorCache
from mailfathom.adapters.sql.vector_reading import NearestFound, start_nearest
from mailfathom.app.shared.stored_mail import (
    EmailRow,
    FolderView,
    SearchRow,
    SummaryFilter,
    SummaryRow,
    ThreadMember,
    TimelinePosition,
)
from mailfathom.app.shared.stored_mail_ports import MailboxReadView
from mailfathom.app.shared.vector_ports import Nearest, PendingNearest

_NO_TEXT = LoadedText(None, None)


# The folders of a page's scope, each read through its own index range (`_page`). One alias
# for every page: an alias made per call would set up its columns again each time (every
# column of `folders`), which took about as long as the rest of the statement's building.
_SCOPED = folders.alias("scoped")
_CUSTOM_PLANS = sa.text("SET LOCAL plan_cache_mode = force_custom_plan")


class SqlMailboxReader:
    """`MailboxReadStore` on the same SQLite or PostgreSQL database `SqlSyncStore` writes."""

    def __init__(
        self,
        engine: sa.Engine,
        texts: TextSource | None = None,
        vectors: VectorCache | None = None,
        catalog: FolderCatalog | None = None,
    ) -> None:
        """`texts` reads the bodies the content store keeps; without it only the bodies kept
        in the database are read. `vectors` is the process's matrices of passage vectors and
        `catalog` its visible folders, each shared by every reader of the store (one of its
        own when not given)."""
        self._engine = engine
        self._texts = texts
        self._dialect = engine.dialect.name
        self._rules: TextRules | None = None
        self._common = CommonWords()
        self._vectors = vectors if vectors is not None else VectorCache()
        self._catalog = catalog if catalog is not None else FolderCatalog()

    @contextmanager
    def snapshot(self) -> Iterator[SqlReadView]:
        """One connection whose reads all see one snapshot, so a page's rows, participants
        and keywords agree even while synchronization commits (SQLite's transactions already
        do; PostgreSQL is asked for a repeatable-read, read-only transaction).

        The read engine does not ping a connection it hands out (`create_store_engine`):
        the first statement, which checks the visible folders, stands for the ping. When it
        finds the connection lost (a restarted database), the engine drops its connections
        and the snapshot begins again once on a new one, before anything was read."""
        for attempt in (1, 2):
            connection = self._engine.connect()
            try:
                if self._dialect != "sqlite":
                    connection.execution_options(
                        isolation_level="REPEATABLE READ", postgresql_readonly=True
                    )
                visible = self._catalog.visible(connection)
                break
            except sa.exc.DBAPIError as error:
                connection.close()
                if attempt == 2 or not error.connection_invalidated:
                    raise
            except BaseException:
                connection.close()
                raise
        with connection:
            rules = self._text(connection)
            yield SqlReadView(connection, visible, rules, self._common, self._texts, self._vectors)
            # It only read: committed, not rolled back, since the driver forgets every
            # statement it prepared on a connection when a transaction of it is rolled back
            # (test_prepared_reads.py). A read that failed is rolled back as it closes.
            connection.commit()

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

    # Each method on the store itself reads in a snapshot of its own.

    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        with self.snapshot() as view:
            return view.readable_folders(account_ids)

    def summaries(
        self,
        selection: SummaryFilter,
        *,
        newest_first: bool,
        after: TimelinePosition | None,
        limit: int,
    ) -> list[SummaryRow]:
        with self.snapshot() as view:
            return view.summaries(selection, newest_first=newest_first, after=after, limit=limit)

    def search(
        self,
        selection: SummaryFilter,
        words: Sequence[str],
        limit: int,
        *,
        with_bodies: bool = True,
    ) -> list[SearchRow]:
        with self.snapshot() as view:
            return view.search(selection, words, limit, with_bodies=with_bodies)

    def indexed_texts(self, seqs: Sequence[int], folder_ids: Sequence[int]) -> dict[int, str]:
        with self.snapshot() as view:
            return view.indexed_texts(seqs, folder_ids)

    def summaries_of(self, seqs: Sequence[int], selection: SummaryFilter) -> dict[int, SummaryRow]:
        with self.snapshot() as view:
            return view.summaries_of(seqs, selection)

    def ranking(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        with self.snapshot() as view:
            return view.ranking(selection, words, limit)

    def nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> list[Nearest]:
        with self.snapshot() as view:
            return view.nearest(generation, query_vector, eligible, window)

    def start_nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> PendingNearest:
        """Ranked at once, in a snapshot of its own: overlapping needs a view's connection."""
        return NearestFound(self.nearest(generation, query_vector, eligible, window))

    def emails(
        self,
        stored_email_ids: Sequence[uuid.UUID],
        folder_ids: Sequence[int],
        *,
        with_html: bool = True,
    ) -> dict[uuid.UUID, EmailRow]:
        with self.snapshot() as view:
            return view.emails(stored_email_ids, folder_ids, with_html=with_html)

    def thread(self, thread_id: uuid.UUID, folder_ids: Sequence[int]) -> list[ThreadMember]:
        with self.snapshot() as view:
            return view.thread(thread_id, folder_ids)

    def threads(
        self, thread_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, list[ThreadMember]]:
        with self.snapshot() as view:
            return view.threads(thread_ids, folder_ids)


class SqlReadView(MailboxReadView):
    """The reads of one request, in one connection and one transaction."""

    def __init__(
        self,
        connection: sa.Connection,
        visible: Mapping[int, FolderView],
        rules: TextRules,
        common: CommonWords,
        texts: TextSource | None = None,
        vectors: VectorCache | None = None,
    ) -> None:
        """`visible` is every folder visible to tools in this snapshot, by id."""
        self._c = connection
        self._vectors = vectors if vectors is not None else VectorCache()
        self._texts = texts
        self._common = common
        self._rules = rules
        self._dialect = rules.dialect
        # Lists are bound as arrays (reading_rows.listed).
        self._arrays = rules.dialect == "postgresql"
        self._visible = visible

    def _folders(self) -> Mapping[int, FolderView]:
        """Every folder visible to tools in this snapshot."""
        return self._visible

    def _scope(self, folder_ids: Sequence[int]) -> dict[int, str]:
        """Alias of each requested folder that exists and is visible to tools."""
        visible = self._folders()
        return {i: visible[i].alias for i in sorted(set(folder_ids)) if i in visible}

    def _accounts(self, scope: Mapping[int, str]) -> list[str]:
        """The accounts of the scope's folders: what every statement of a read names."""
        visible = self._folders()
        return sorted({visible[i].account_id for i in scope})

    def _ranks(self, scope: dict[int, str]) -> dict[int, int]:
        visible = self._folders()
        return message_copies.precedence(visible[i] for i in scope)

    def _standing(
        self,
        ranks: dict[int, int],
        filters: RowFilters,
        terms: Sequence[str] = (),
        known: sa.FromClause | None = None,
    ) -> list[sa.ColumnElement[bool]]:
        """The condition that a row stands for its message, when the scope has copies to
        merge. A copy that comes first hides the row only if it passes the request's filters
        and holds the searched `terms` too, so that a copy failing them never hides one that
        passes. `known` (a CTE with a `seq` column) holds matches of the terms, which spare
        looking a copy up in the index."""
        if not message_copies.merges(ranks):
            return []
        earlier = message_copies.EARLIER
        passing = filters.on(earlier)
        if terms:
            words = index_matching(self._dialect, terms, earlier)
            if known is not None:
                words = sa.or_(earlier.c.seq.in_(sa.select(known.c.seq)), words)
            passing.append(words)
        return [message_copies.first_copies(ranks, passing, array=self._arrays)]

    def _summaries_of(
        self, seqs: list[int], scope: dict[int, str], ranks: dict[int, int]
    ) -> dict[int, SummaryRow]:
        accounts = self._accounts(scope)
        loaded = load_summaries(self._c, seqs, scope, accounts)
        others = message_copies.other_folders(self._c, seqs, ranks, scope, accounts)
        return {
            seq: dataclasses.replace(one.summary, other_folder_aliases=others[seq])
            if seq in others
            else one.summary
            for seq, one in loaded.items()
        }

    # -- folders -------------------------------------------------------------------------

    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        wanted = set(account_ids)
        if not wanted:
            return []
        found = [f for f in self._folders().values() if f.account_id in wanted]
        # Sorted here, not by the database, so both backends agree whatever their collation.
        found.sort(key=lambda f: (f.account_id, f.alias, f.folder_id))
        return found

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
        scope = self._scope(selection.folder_ids)
        if not scope:
            return []
        filters = RowFilters.of(self._c, selection, self._rules, self._accounts(scope))
        ranks = self._ranks(scope)
        where = [*filters.on(), *self._standing(ranks, filters)]
        seqs = self._timeline(scope, where, newest_first, after, limit)
        loaded = self._summaries_of(seqs, scope, ranks)
        return [loaded[s] for s in seqs]

    def _timeline(
        self,
        scope: dict[int, str],
        filters: list[sa.ColumnElement[bool]],
        newest_first: bool,
        after: TimelinePosition | None,
        limit: int,
    ) -> list[int]:
        """`seq` of up to `limit` rows of the scope passing `filters`, in timeline order."""
        seqs: list[int] = []
        for stretch in stretches(newest_first, after):
            if len(seqs) >= limit:
                break
            query = self._page(stretch, newest_first, scope, filters, limit - len(seqs))
            seqs.extend(self._c.execute(query).scalars())
        return seqs

    def _page(
        self,
        stretch: Stretch,
        newest_first: bool,
        scope: dict[int, str],
        filters: list[sa.ColumnElement[bool]],
        limit: int,
    ) -> sa.Select[Any]:
        """`seq` of the next rows of one stretch.

        PostgreSQL reads each folder's own index range (a LATERAL subquery per folder) and
        merges them, since it cannot merge the ranges of `folder_id IN (...)` itself and would
        otherwise sort every row in scope. SQLite reads each folder's range of the index in
        order and stops it once the page is full, then sorts what it kept.

        Both name the scope's accounts too, as every statement of a read does. SQLite checks
        them on the rows it reads (`account_per_row`): offered `ix_messages_account_received`,
        which holds an account's timeline in order as well, it has no statistics to tell
        that a folder's range is the smaller."""
        keys = (messages.c.received_at, messages.c.seq) if stretch.dated else (messages.c.seq,)
        rows = sa.select(messages.c.seq, messages.c.received_at).where(stretch.condition, *filters)
        accounts = self._accounts(scope)
        if self._dialect != "postgresql":
            return (
                rows.where(
                    among(False, account_per_row(messages), accounts),
                    messages.c.folder_id.in_(sorted(scope)),
                )
                .order_by(*ordered_by(keys, newest_first))
                .limit(limit)
            )
        scoped = _SCOPED
        page = (
            rows.where(
                among(True, messages.c.account_id, accounts),
                messages.c.folder_id == scoped.c.folder_id,
            )
            .order_by(*ordered_by(keys, newest_first))
            .limit(limit)
            .lateral("page")
        )
        merged = (page.c.received_at, page.c.seq) if stretch.dated else (page.c.seq,)
        return (
            sa.select(page.c.seq)
            .select_from(scoped.join(page, sa.true()))
            .where(among(True, scoped.c.folder_id, sorted(scope)))
            .order_by(*ordered_by(merged, newest_first))
            .limit(limit)
        )

    def search(
        self,
        selection: SummaryFilter,
        words: Sequence[str],
        limit: int,
        *,
        with_bodies: bool = True,
    ) -> list[SearchRow]:
        found = self._matches(selection, words, limit)
        if found is None:
            return []
        hits, scope, ranks = found
        seqs = [h.seq for h in hits]
        loaded = self._summaries_of(seqs, scope, ranks)
        bodies = (
            load_texts(self._c, seqs, self._accounts(scope), self._texts, with_html=False)
            if with_bodies
            else {}
        )
        return [SearchRow(loaded[h.seq], h.rank, indexed(bodies.get(h.seq))) for h in hits]

    def ranking(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        found = self._matches(selection, words, limit)
        return [] if found is None else [(h.seq, h.rank) for h in found[0]]

    def _matches(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> tuple[list[Match], dict[int, str], dict[int, int]] | None:
        """`search`'s rows, unread, with the scope and the copies' precedence they were
        read under (None: nothing can match)."""
        terms = searchable(words)
        if not terms or limit <= 0:
            return None
        scope = self._scope(selection.folder_ids)
        if not scope:
            return None
        accounts = self._accounts(scope)
        if self._dialect == "postgresql":
            # The lexical statements are planned for their words, prepared or not: a plan
            # for any words (a generic plan) cannot tell a rare word from a common one and
            # ranks every document. Until the snapshot ends.
            self._c.execute(_CUSTOM_PLANS)
        filters = RowFilters.of(self._c, selection, self._rules, accounts)
        ranks = self._ranks(scope)
        where = filters.on()

        def in_scope(known: sa.FromClause | None = None) -> list[sa.ColumnElement[bool]]:
            standing = self._standing(ranks, filters, terms, known)
            return [
                among(self._arrays, messages.c.account_id, accounts),
                among(self._arrays, messages.c.folder_id, sorted(scope)),
                *where,
                *standing,
            ]

        matching = weightless_matching(self._c, terms, self._common, accounts)
        if matching is not None:
            # Nothing to rank by (see reading_search): the newest matches, all ranked 0.
            standing = self._standing(ranks, filters, terms)
            newest = self._timeline(scope, [*where, *standing, matching], True, None, limit)
            hits = [Match(seq, 0.0) for seq in newest]
        elif self._dialect == "postgresql":
            hits = postgresql_matches(self._c, terms, in_scope(), limit)
        else:
            hits = sqlite_matches(self._c, terms, in_scope, limit)
        return hits, scope, ranks

    def nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> list[Nearest]:
        """`NearestPassages.nearest` under the conditions `search` applies."""
        return self.start_nearest(generation, query_vector, eligible, window).result()

    def start_nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> PendingNearest:
        scope = self._scope(eligible.folder_ids)
        if not scope or window <= 0:
            return NearestFound([])
        filters = RowFilters.of(self._c, eligible, self._rules, self._accounts(scope))
        return start_nearest(
            self._c,
            self._vectors,
            generation,
            query_vector,
            list(scope),
            self._accounts(scope),
            filters.on(),
            window,
            standing=self._standing(self._ranks(scope), filters),
        )

    def summaries_of(self, seqs: Sequence[int], selection: SummaryFilter) -> dict[int, SummaryRow]:
        scope = self._scope(selection.folder_ids) if seqs else {}
        if not scope:
            return {}
        found = inside(self._c, seqs, scope, self._accounts(scope))
        return self._summaries_of(found, scope, self._ranks(scope))

    def indexed_texts(self, seqs: Sequence[int], folder_ids: Sequence[int]) -> dict[int, str]:
        scope = self._scope(folder_ids) if seqs else {}
        if not scope:
            return {}
        return indexed_texts_in(self._c, seqs, sorted(scope), self._accounts(scope), self._texts)

    # -- content and conversations -------------------------------------------------------

    def emails(
        self,
        stored_email_ids: Sequence[uuid.UUID],
        folder_ids: Sequence[int],
        *,
        with_html: bool = True,
    ) -> dict[uuid.UUID, EmailRow]:
        wanted = sorted(set(stored_email_ids))
        scope = self._scope(folder_ids) if wanted else {}
        if not scope:
            return {}
        accounts = self._accounts(scope)
        loaded = load_identified(self._c, wanted, scope, accounts)
        seqs = list(loaded)
        bodies = load_texts(self._c, seqs, accounts, self._texts, with_html=with_html)
        files = load_parts(self._c, seqs, (one.summary.account_id for one in loaded.values()))
        result: dict[uuid.UUID, EmailRow] = {}
        for seq, one in loaded.items():
            text = bodies.get(seq, _NO_TEXT)
            result[one.summary.stored_email_id] = EmailRow(
                summary=one.summary,
                participants=one.participants,
                in_reply_to=split_ids(one.row.in_reply_to),
                references=split_ids(one.row.references_header),
                plain_text=text.plain,
                html=text.html,
                parts=tuple(files.get(seq, ())),
                content_key=one.row.content_key,
                text_missing=text.missing,
            )
        return result

    def thread(self, thread_id: uuid.UUID, folder_ids: Sequence[int]) -> list[ThreadMember]:
        return self.threads([thread_id], folder_ids).get(thread_id, [])

    def threads(
        self, thread_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, list[ThreadMember]]:
        wanted = sorted(set(thread_ids))
        scope = self._scope(folder_ids) if wanted else {}
        if not scope:
            return {}
        return conversation_members(
            self._c, wanted, sorted(scope), self._ranks(scope), self._accounts(scope)
        )
