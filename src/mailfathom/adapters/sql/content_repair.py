"""Finding stored content and asking for its repair (`ContentRepairStore`)."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import message_bodies, messages, same_message
from mailfathom.adapters.sql.store_base import SqlTables
from mailfathom.domain.content_state import ContentState


class SqlContentRepairStore(SqlTables):
    """`ContentRepairStore`: where each message's content is, and requests to fetch it again."""

    def content_key_of(self, stored_email_id: uuid.UUID) -> tuple[str, int, str | None] | None:
        with self.engine.connect() as c:
            row = c.execute(
                sa.select(messages.c.account_id, messages.c.seq, messages.c.content_key).where(
                    messages.c.stored_email_id == stored_email_id
                )
            ).first()
        return None if row is None else (str(row.account_id), int(row.seq), row.content_key)

    def content_references(self, account_id: str | None = None) -> list[tuple[str, int, str, bool]]:
        """(account, seq, content key, whether the bodies are in the content store) of every
        row whose content is meant to be held locally. Bodies are in the content store
        unless the database holds them (messages repaired, or stored by earlier versions)."""
        query = (
            sa.select(
                messages.c.account_id,
                messages.c.seq,
                messages.c.content_key,
                message_bodies.c.seq.is_(None),
            )
            .select_from(messages.outerjoin(message_bodies, same_message(message_bodies, messages)))
            .where(
                messages.c.content_state == ContentState.STORED.value,
                messages.c.content_key.is_not(None),
            )
        )
        if account_id is not None:
            query = query.where(messages.c.account_id == account_id)
        with self.engine.connect() as c:
            return [
                (str(account), int(seq), str(key), bool(held))
                for account, seq, key, held in c.execute(query)
            ]

    def request_repair(self, account_id: str, seq: int, reason: str) -> None:
        self._record_repair_request(account_id, seq, reason)
