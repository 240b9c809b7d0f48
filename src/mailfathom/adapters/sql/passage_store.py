"""`PassageStore`: generations, the messages each has read, and their passage vectors.

Each generation's backfill walks each account's messages in `seq` order from that account's
position (`embedding_positions`); every statement about the messages, the messages each
generation has read and their vectors names one account, so a partitioned or distributed
store reads that account's rows alone (docs/scaling.md). What spans every account (how much
of the mail a generation holds, how much waits) is asked account by account, but for each
account's newest message, which every search asks (`is_filled`): one statement names every
account and reads each one's newest.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from mailfathom.adapters.sql import bulk
from mailfathom.adapters.sql.reading_rows import account_per_row, arrays, chunks, listed
from mailfathom.adapters.sql.reading_texts import TextSource, load_texts
from mailfathom.adapters.sql.schema import (
    accounts,
    embedded_messages,
    embedding_generations,
    embedding_positions,
    folders,
    messages,
    passage_vectors,
)
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.adapters.sql.vector_cache import RECOUNT_SECONDS
from mailfathom.adapters.vectors.codec import encode
from mailfathom.app.shared.vector_ports import FillState
from mailfathom.app.sync.embedding_ports import EmbeddedMessage, Generation, MessageText
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.embedding import ProfileIdentity
from mailfathom.domain.folders import FolderRole

_G = embedding_generations.c
# A generation once filled still counts as filled while at most this many messages wait past
# its position: the few a pass just stored, which the backfill reaches within seconds (or a
# minute, with a transformer on two cores). More than that is a large pass or a long pause
# of the provider, and the generation answers for too little of the mail.
WAITING_TOLERATED = 200


def embeddable(sqlite: bool) -> list[sa.ColumnElement[bool]]:
    """The conditions on `messages` of mail a generation should hold: content held, and in
    no junk-role folder (a folder without a role is not junk).

    Every statement using them reads one account's messages, from `uq_messages_account_seq`.
    On SQLite the content state is checked on each row read (`+content_state`): without
    statistics SQLite would read an account's walk from `ix_messages_content_state` instead,
    every account's held mail in `seq` order."""
    junk = sa.select(folders.c.folder_id).where(folders.c.role == FolderRole.JUNK.value)
    state: sa.ColumnElement[str] = messages.c.content_state
    if sqlite:
        state = sa.literal_column("+messages.content_state", messages.c.content_state.type)
    return [
        state == ContentState.STORED.value,
        messages.c.folder_id.not_in(junk.scalar_subquery()),
    ]


def _not_read(generation_id: int) -> sa.ColumnElement[bool]:
    return ~sa.exists().where(
        embedded_messages.c.generation_id == generation_id,
        embedded_messages.c.account_id == messages.c.account_id,
        embedded_messages.c.seq == messages.c.seq,
    )


class SqlPassageStore(SqlTables):
    def __init__(
        self,
        engine: sa.Engine,
        texts: TextSource | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`texts` reads the bodies the content store keeps (see `reading_texts`); `clock`
        times how long `is_filled` keeps an answer."""
        super().__init__(engine)
        self._texts = texts
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: dict[str, tuple[tuple[Any, ...], bool, float]] = {}

    def open_generation(self, identity: ProfileIdentity, at: datetime) -> Generation:
        create = (
            self._insert(embedding_generations)
            .values(
                generation=identity.generation,
                model=identity.model,
                version=identity.version,
                dimension=identity.dimension,
                created_at=at,
            )
            .on_conflict_do_nothing(index_elements=["generation"])
        )
        with self.engine.begin() as c:
            c.execute(create)
            found = _walked(c, identity.generation)
        if found is None:
            raise RuntimeError("the generation was not created")
        generation_id, filled_at, positions = found
        return Generation(generation_id, identity, positions, filled_at is not None)

    def unembedded(
        self, generation_id: int, account_id: str, after_seq: int, limit: int
    ) -> list[MessageText]:
        statement = (
            sa.select(messages.c.seq, messages.c.subject)
            .where(
                messages.c.account_id == account_id,
                messages.c.seq > after_seq,
                *embeddable(self._dialect == "sqlite"),
                _not_read(generation_id),
            )
            .order_by(messages.c.seq)
            .limit(limit)
        )
        with self.engine.connect() as c:
            rows = c.execute(statement).all()
            seqs = [int(r.seq) for r in rows]
            bodies = load_texts(c, seqs, [account_id], self._texts, with_html=False)
        found: list[MessageText] = []
        for row in rows:
            body = bodies.get(int(row.seq))
            plain = None if body is None or body.missing else (body.plain or "")
            found.append(MessageText(account_id, int(row.seq), row.subject, plain))
        return found

    def record(
        self,
        generation_id: int,
        embedded: Sequence[EmbeddedMessage],
        account_id: str,
        after_seq: int,
    ) -> None:
        """The messages still stored are held against removal until the commit (PostgreSQL:
        FOR KEY SHARE; SQLite's writer holds the database), and a message another process
        recorded meanwhile keeps its row (ON CONFLICT DO NOTHING): only the messages this
        call notes read get vectors. Each statement names one account (the batch is looked
        up account by account)."""
        by_account: dict[str, list[int]] = {}
        for owner, seq, _ in embedded:
            by_account.setdefault(owner, []).append(seq)
        with self.engine.begin() as c:
            present: set[tuple[str, int]] = set()
            for owner, seqs in sorted(by_account.items()):
                for chunk in chunks(seqs):
                    held = (
                        sa.select(messages.c.seq)
                        .where(
                            messages.c.account_id == owner,
                            messages.c.seq.in_(chunk),
                            _not_read(generation_id),
                        )
                        .with_for_update(read=True, key_share=True)
                    )
                    present.update((owner, int(seq)) for seq in c.execute(held).scalars())
            marks = [
                {
                    "generation_id": generation_id,
                    "account_id": owner,
                    "seq": seq,
                    "passages": len(vectors),
                }
                for owner, seq, vectors in embedded
                if (owner, seq) in present
            ]
            noted: set[tuple[str, int]] = set()
            if marks:
                statement = (
                    self._insert(embedded_messages)
                    .values(marks)
                    .on_conflict_do_nothing(index_elements=["generation_id", "account_id", "seq"])
                    .returning(embedded_messages.c.account_id, embedded_messages.c.seq)
                )
                noted = {(str(a), int(seq)) for a, seq in c.execute(statement)}
            rows = [
                (generation_id, owner, seq, position, *encode(vector))
                for owner, seq, vectors in embedded
                if (owner, seq) in noted
                for position, vector in enumerate(vectors)
            ]
            bulk.insert_rows(
                c,
                "passage_vectors",
                ("generation_id", "account_id", "seq", "position", "scale", "vector"),
                rows,
            )
            position = self._insert(embedding_positions).values(
                generation_id=generation_id, account_id=account_id, after_seq=after_seq
            )
            c.execute(
                position.on_conflict_do_update(
                    index_elements=["generation_id", "account_id"],
                    set_={"after_seq": position.excluded.after_seq},
                    where=embedding_positions.c.after_seq < position.excluded.after_seq,
                )
            )

    def finish(self, generation_id: int, at: datetime) -> int:
        with self.engine.begin() as c:
            c.execute(
                embedding_generations.update()
                .where(_G.generation_id == generation_id, _G.filled_at.is_(None))
                .values(filled_at=at)
            )
            others = _G.generation_id != generation_id
            older = list(c.execute(sa.select(_G.generation_id).where(others)).scalars())
            if older:
                # Row by row the cascade would look each vector up again: the rows go first,
                # an account at a time (every account that holds mail has a folder).
                for account_id in _accounts(c):
                    for table in (passage_vectors, embedded_messages):
                        c.execute(
                            table.delete().where(
                                table.c.account_id == account_id,
                                table.c.generation_id.in_(older),
                            )
                        )
            dropped = c.execute(embedding_generations.delete().where(others)).rowcount
        return int(dropped)

    def is_filled(self, generation: str) -> bool:
        """Asked by every search: the count of waiting messages (a scan of those past each
        account's position, junk included) is made again only when the generation's mark
        changed (its positions, its filled time, each account's newest message, the
        tolerance), or `RECOUNT_SECONDS` after it was last made. So the backfill moving on,
        or a pass storing new mail, shows at the next call; a change the mark does not see
        (content fetched later, a folder becoming junk, messages removed below the newest)
        within `RECOUNT_SECONDS`, as `VectorCache` sees removals. The mark is two statements:
        the generation with its positions, and every account's newest message."""
        with self.engine.connect() as c:
            found = _walked(c, generation)
            if found is None or found[1] is None:
                return False
            generation_id, filled_at, positions = found
            mark = (
                generation_id,
                filled_at,
                tuple(positions.items()),
                _newest(c, list(positions)),
                WAITING_TOLERATED,
            )
            now = self._clock()
            with self._lock:
                held = self._answers.get(generation)
            if held is not None and held[0] == mark and now - held[2] < RECOUNT_SECONDS:
                return held[1]
            filled = _waiting(c, positions) <= WAITING_TOLERATED
        with self._lock:
            self._answers[generation] = (mark, filled, now)
        return filled

    def fill_state(self, generation: str) -> FillState:
        """Counted account by account."""
        with self.engine.connect() as c:
            found = _walked(c, generation)
            held = _accounts(c) if found is None else list(found[2])
            counted = _ELIGIBLE[c.dialect.name == "sqlite"]
            eligible = sum(_count(c, counted, {"account_id": a}) for a in held)
            if found is None:
                return FillState(generation, 0, eligible, False)
            generation_id, filled_at, positions = found
            embedded = sum(
                _count(c, _EMBEDDED, {"generation_id": generation_id, "account_id": a})
                for a in held
            )
            filled = filled_at is not None and _waiting(c, positions) <= WAITING_TOLERATED
        return FillState(generation, embedded, eligible, filled)


def _accounts(c: sa.Connection) -> list[str]:
    """Every account, in order: those that hold mail among them."""
    ordered = sa.select(accounts.c.account_id).order_by(accounts.c.account_id)
    return [str(a) for a in c.execute(ordered).scalars()]


def _walked(
    c: sa.Connection, generation: str
) -> tuple[int, datetime | None, dict[str, int]] | None:
    """The generation's id, when it was filled and each account's position (0: none yet),
    in one statement; None when the store has no such generation."""
    rows = c.execute(_WALKED, {"generation": generation}).all()
    if not rows:
        return None
    positions = {str(r.account_id): int(r.after_seq) for r in rows if r.account_id is not None}
    return int(rows[0].generation_id), rows[0].filled_at, positions


def _newest(c: sa.Connection, account_ids: list[str]) -> tuple[tuple[str, int | None], ...]:
    """Each account's newest message (None: it holds none), in one statement (`_NEWEST`)."""
    if not account_ids:
        return ()
    if arrays(c):
        rows = c.execute(_NEWEST[True], {"named": account_ids})
    else:
        rows = c.execute(_NEWEST[False], {"named": json.dumps(account_ids), "listed": account_ids})
    return tuple((str(a), None if seq is None else int(seq)) for a, seq in rows)


def _newest_statement(array: bool) -> sa.Select[Any]:
    """Each listed account's newest message, reading each account's end of
    `uq_messages_account_seq`. The statement names the accounts it reads: as one array on
    PostgreSQL, whose partitioned store then plans for their partitions alone; on SQLite as
    a list checked on the row found (`account_per_row`), so that the list is not taken for
    the index's range instead of each account. The accounts come as a table: `unnest` of
    the array, or `json_each` of a JSON list on SQLite."""
    if array:
        named: Any = (
            sa.func.unnest(sa.bindparam("named", type_=postgresql.ARRAY(sa.String(64))))
            .table_valued("account_id")
            .render_derived(name="named")
        )
        account = named.c.account_id
        scoped = listed(True, messages.c.account_id, "named")
    else:
        named = sa.func.json_each(sa.bindparam("named", type_=sa.String)).table_valued(
            "value", name="named"
        )
        account = named.c.value
        scoped = listed(False, account_per_row(messages), "listed")
    newest = (
        sa.select(sa.func.max(messages.c.seq))
        .where(messages.c.account_id == account, scoped)
        .scalar_subquery()
    )
    return sa.select(account, newest).order_by(account)


_NEWEST = {array: _newest_statement(array) for array in (False, True)}
_WALKED = (
    sa.select(
        _G.generation_id,
        _G.filled_at,
        accounts.c.account_id,
        sa.func.coalesce(embedding_positions.c.after_seq, 0).label("after_seq"),
    )
    .select_from(
        embedding_generations.outerjoin(accounts, sa.true()).outerjoin(
            embedding_positions,
            sa.and_(
                embedding_positions.c.generation_id == _G.generation_id,
                embedding_positions.c.account_id == accounts.c.account_id,
            ),
        )
    )
    .where(_G.generation == sa.bindparam("generation"))
    .order_by(accounts.c.account_id)
)


def _count(c: sa.Connection, statement: sa.Select[Any], values: dict[str, Any]) -> int:
    return int(c.execute(statement, values).scalar_one())


_ACCOUNT = sa.bindparam("account_id", type_=messages.c.account_id.type)
_ELIGIBLE = {
    sqlite: sa.select(sa.func.count())
    .select_from(messages)
    .where(messages.c.account_id == _ACCOUNT, *embeddable(sqlite))
    for sqlite in (False, True)
}
_EMBEDDED = (
    sa.select(sa.func.count())
    .select_from(embedded_messages)
    .where(
        embedded_messages.c.generation_id == sa.bindparam("generation_id"),
        embedded_messages.c.account_id == _ACCOUNT,
    )
)


def _waiting(c: sa.Connection, positions: dict[str, int]) -> int:
    """How many messages the generation should hold wait past each account's position,
    counted account by account up to one more than `WAITING_TOLERATED` in all."""
    total = 0
    for account_id, after_seq in positions.items():
        total += _behind(c, account_id, after_seq, WAITING_TOLERATED + 1 - total)
        if total > WAITING_TOLERATED:
            break
    return total


def _behind(c: sa.Connection, account_id: str, after_seq: int, limit: int) -> int:
    """How many messages of `account_id` the generation should hold wait past `after_seq`,
    counted up to `limit`."""
    waiting = (
        sa.select(sa.literal(1))
        .where(
            messages.c.account_id == account_id,
            messages.c.seq > after_seq,
            *embeddable(c.dialect.name == "sqlite"),
        )
        .limit(limit)
        .subquery()
    )
    return int(c.execute(sa.select(sa.func.count()).select_from(waiting)).scalar_one())
