"""`TrustRecords`: the stored readings as reverification replaces them, and its position."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import message_trust, messages, same_message, trust_positions
from mailfathom.adapters.sql.trust_rows import replace_trust, trust_tuple
from mailfathom.app.sync.reverify import StoredForTrust, TrustRecord


class SqlTrustRecords:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def position(self, account_id: str) -> int | None:
        with self.engine.connect() as c:
            found = c.execute(
                sa.select(trust_positions.c.after_seq).where(
                    trust_positions.c.account_id == account_id
                )
            ).scalar()
        return None if found is None else int(found)

    def progress(self, account_id: str, after_seq: int) -> tuple[int, int]:
        mine = messages.c.account_id == account_id
        with self.engine.connect() as c:
            total, done = c.execute(
                sa.select(
                    sa.func.count(),
                    sa.func.count().filter(messages.c.seq <= after_seq),
                ).where(mine)
            ).one()
        return int(total), int(done)

    def stored_after(self, account_id: str, after_seq: int, limit: int) -> list[StoredForTrust]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(messages.c.seq, messages.c.content_key)
                .where(messages.c.account_id == account_id, messages.c.seq > after_seq)
                .order_by(messages.c.seq)
                .limit(limit)
            )
            return [StoredForTrust(int(seq), key) for seq, key in rows]

    def record(
        self, account_id: str, records: Sequence[TrustRecord], after_seq: int, at: datetime
    ) -> None:
        rows = [
            trust_tuple(seq, verdict, reading)
            for seq, verdict, reading in records
            if verdict is not None or reading is not None
        ]
        with self.engine.begin() as c:
            replace_trust(c, account_id, rows)
            c.execute(trust_positions.delete().where(trust_positions.c.account_id == account_id))
            c.execute(
                trust_positions.insert().values(
                    account_id=account_id, after_seq=after_seq, updated_at=at
                )
            )

    def finish(self, account_id: str) -> None:
        with self.engine.begin() as c:
            c.execute(trust_positions.delete().where(trust_positions.c.account_id == account_id))

    def unrecorded(self, account_id: str, after_seq: int, limit: int) -> list[StoredForTrust]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(messages.c.seq, messages.c.content_key)
                .select_from(
                    messages.outerjoin(message_trust, same_message(message_trust, messages))
                )
                .where(
                    messages.c.account_id == account_id,
                    messages.c.seq > after_seq,
                    messages.c.content_key.is_not(None),
                    message_trust.c.seq.is_(None),
                )
                .order_by(messages.c.seq)
                .limit(limit)
            )
            return [StoredForTrust(int(seq), key) for seq, key in rows]

    def fill_in(self, account_id: str, records: Sequence[TrustRecord]) -> None:
        with self.engine.begin() as c:
            replace_trust(c, account_id, [trust_tuple(seq, v, r) for seq, v, r in records])
