"""Conversations as a whole (`ConversationStore`): their inputs, and deriving them again."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql import threads
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.domain.conversations import ThreadInput


class SqlConversationStore(SqlTables):
    """`ConversationStore`: every message's threading headers, and a full re-derivation."""

    def thread_inputs(self, account_id: str) -> list[ThreadInput]:
        with self.engine.connect() as c:
            return [
                ThreadInput(
                    key=str(r.stored_email_id),
                    message_id=r.message_id_header,
                    in_reply_to=threads.split_ids(r.in_reply_to),
                    references=threads.split_ids(r.references_header),
                    sent_at=r.sent_at,
                )
                for r in c.execute(
                    sa.select(
                        messages.c.stored_email_id,
                        messages.c.message_id_header,
                        messages.c.in_reply_to,
                        messages.c.references_header,
                        messages.c.sent_at,
                    ).where(messages.c.account_id == account_id)
                )
            ]

    def rederive_conversations(self, account_id: str) -> int:
        with self.engine.begin() as c:
            return threads.rederive_account(c, account_id)
