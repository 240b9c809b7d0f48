"""What waits to be repaired in the store, for the console's health page: messages whose
stored content a read or `mfctl mailbox verify` found missing or damaged (fetched again by
the folder's next pass), and reverifications (`mfctl mailbox reverify`) left unfinished."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import messages, repair_requests, same_message, trust_positions


class SqlPendingRepairs:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def repairs_by_folder(self, account_id: str) -> dict[int, int]:
        """How many repair requests of the account wait, per folder identifier (only folders
        with any)."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(messages.c.folder_id, sa.func.count())
                .select_from(
                    repair_requests.join(messages, same_message(repair_requests, messages))
                )
                .where(repair_requests.c.account_id == account_id)
                .group_by(messages.c.folder_id)
            ).all()
        return {int(folder_id): int(count) for folder_id, count in rows}

    def unfinished_reverifications(self) -> frozenset[str]:
        """The accounts whose last reverification stopped before the end (it resumes)."""
        with self.engine.connect() as c:
            return frozenset(c.execute(sa.select(trust_positions.c.account_id)).scalars())
