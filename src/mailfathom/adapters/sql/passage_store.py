"""`PassageStore`: generations, the messages each has read, and their passage vectors."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import bulk
from mailfathom.adapters.sql.reading_rows import chunks
from mailfathom.adapters.sql.reading_texts import TextSource, load_texts
from mailfathom.adapters.sql.schema import (
    embedded_messages,
    embedding_generations,
    folders,
    messages,
    passage_vectors,
)
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.adapters.sql.vector_reading import RECOUNT_SECONDS
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


def embeddable() -> list[sa.ColumnElement[bool]]:
    """The conditions on `messages` of mail a generation should hold: content held, and in
    no junk-role folder (a folder without a role is not junk)."""
    junk = sa.select(folders.c.folder_id).where(folders.c.role == FolderRole.JUNK.value)
    return [
        messages.c.content_state == ContentState.STORED.value,
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
                after_seq=0,
                created_at=at,
            )
            .on_conflict_do_nothing(index_elements=["generation"])
        )
        with self.engine.begin() as c:
            c.execute(create)
            row = c.execute(
                sa.select(_G.generation_id, _G.after_seq, _G.filled_at).where(
                    _G.generation == identity.generation
                )
            ).one()
        return Generation(
            int(row.generation_id), identity, int(row.after_seq), row.filled_at is not None
        )

    def unembedded(self, generation_id: int, after_seq: int, limit: int) -> list[MessageText]:
        statement = (
            sa.select(messages.c.account_id, messages.c.seq, messages.c.subject)
            .where(messages.c.seq > after_seq, *embeddable(), _not_read(generation_id))
            .order_by(messages.c.seq)
            .limit(limit)
        )
        with self.engine.connect() as c:
            rows = c.execute(statement).all()
            seqs = [int(r.seq) for r in rows]
            accounts = (str(r.account_id) for r in rows)
            bodies = load_texts(c, seqs, accounts, self._texts, with_html=False)
        found: list[MessageText] = []
        for row in rows:
            body = bodies.get(int(row.seq))
            plain = None if body is None or body.missing else (body.plain or "")
            found.append(MessageText(str(row.account_id), int(row.seq), row.subject, plain))
        return found

    def record(
        self, generation_id: int, embedded: Sequence[EmbeddedMessage], after_seq: int
    ) -> None:
        """The messages still stored are held against removal until the commit (PostgreSQL:
        FOR KEY SHARE; SQLite's writer holds the database), and a message another process
        recorded meanwhile keeps its row (ON CONFLICT DO NOTHING): only the messages this
        call notes read get vectors. Each statement names one account (the batch is looked
        up account by account)."""
        by_account: dict[str, list[int]] = {}
        for account_id, seq, _ in embedded:
            by_account.setdefault(account_id, []).append(seq)
        with self.engine.begin() as c:
            present: set[tuple[str, int]] = set()
            for account_id, seqs in sorted(by_account.items()):
                for chunk in chunks(seqs):
                    held = (
                        sa.select(messages.c.seq)
                        .where(
                            messages.c.account_id == account_id,
                            messages.c.seq.in_(chunk),
                            _not_read(generation_id),
                        )
                        .with_for_update(read=True, key_share=True)
                    )
                    present.update((account_id, int(seq)) for seq in c.execute(held).scalars())
            marks = [
                {
                    "generation_id": generation_id,
                    "account_id": account_id,
                    "seq": seq,
                    "passages": len(vectors),
                }
                for account_id, seq, vectors in embedded
                if (account_id, seq) in present
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
                (generation_id, account_id, seq, position, *encode(vector))
                for account_id, seq, vectors in embedded
                if (account_id, seq) in noted
                for position, vector in enumerate(vectors)
            ]
            bulk.insert_rows(
                c,
                "passage_vectors",
                ("generation_id", "account_id", "seq", "position", "scale", "vector"),
                rows,
            )
            c.execute(
                embedding_generations.update()
                .where(_G.generation_id == generation_id, _G.after_seq < after_seq)
                .values(after_seq=after_seq)
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
                accounts = c.execute(sa.select(folders.c.account_id).distinct()).scalars()
                for account_id in sorted(accounts):
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
        """Asked by every search: the count of waiting messages (a scan of those past the
        generation's position, junk included) is made again only when the generation's
        mark changed (its position, its filled time, the newest message, the tolerance),
        read in one statement, or `RECOUNT_SECONDS` after it was last made. So the backfill
        reaching the end, or a pass storing new mail, shows at the next call; a change the
        mark does not see (content fetched later, a folder becoming junk, messages removed
        below the newest) within `RECOUNT_SECONDS`, as `VectorCache` sees removals."""
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(
                    _G.generation_id,
                    _G.after_seq,
                    _G.filled_at,
                    sa.select(sa.func.max(messages.c.seq)).scalar_subquery(),
                ).where(_G.generation == generation)
            ).one_or_none()
            if row is None or row.filled_at is None:
                return False
            mark = (*row, WAITING_TOLERATED)
            now = self._clock()
            with self._lock:
                held = self._answers.get(generation)
            if held is not None and held[0] == mark and now - held[2] < RECOUNT_SECONDS:
                return held[1]
            filled = _behind(c, int(row.after_seq)) <= WAITING_TOLERATED
        with self._lock:
            self._answers[generation] = (mark, filled, now)
        return filled

    def _filled(self, c: sa.Connection, generation: str) -> bool:
        found = c.execute(
            sa.select(_G.after_seq, _G.filled_at).where(_G.generation == generation)
        ).one_or_none()
        if found is None or found.filled_at is None:
            return False
        return _behind(c, int(found.after_seq)) <= WAITING_TOLERATED

    def fill_state(self, generation: str) -> FillState:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(_G.generation_id).where(_G.generation == generation)
            ).one_or_none()
            eligible = c.execute(
                sa.select(sa.func.count()).select_from(messages).where(*embeddable())
            ).scalar_one()
            if row is None:
                return FillState(generation, 0, int(eligible), False)
            embedded = c.execute(
                sa.select(sa.func.count())
                .select_from(embedded_messages)
                .where(embedded_messages.c.generation_id == row.generation_id)
            ).scalar_one()
            filled = self._filled(c, generation)
        return FillState(generation, int(embedded), int(eligible), filled)


def _behind(c: sa.Connection, after_seq: int) -> int:
    """How many messages a generation should hold wait past `after_seq`, counted up to one
    more than `WAITING_TOLERATED`."""
    waiting = (
        sa.select(sa.literal(1))
        .where(messages.c.seq > after_seq, *embeddable())
        .limit(WAITING_TOLERATED + 1)
        .subquery()
    )
    return int(c.execute(sa.select(sa.func.count()).select_from(waiting)).scalar_one())
