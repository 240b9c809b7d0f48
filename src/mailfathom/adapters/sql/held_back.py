"""Messages whose content is held back (awaiting storage room) or awaiting a repair."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql import bulk, search_index, threads
from mailfathom.adapters.sql.rows import ChildRows, add_child_rows, derived_values, index_document
from mailfathom.adapters.sql.schema import (
    message_bodies,
    message_identifiers,
    messages,
    participants,
    parts,
    repair_requests,
)
from mailfathom.adapters.sql.store_base import SqlTables, account_of
from mailfathom.adapters.sql.trust_rows import replace_trust, trust_tuple
from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.message import NormalizedMessage
from mailfathom.domain.sender_verdict import SenderVerdict

# Questions about held-back messages start from the rare rows: the unary `+` keeps SQLite
# from walking a whole folder by its (folder, UIDVALIDITY) index to find the few rows in a
# given state or with a repair request; those are looked up one by one instead.
_WAITING = "FROM messages WHERE content_state = :waiting AND +folder_id = :f AND +uidvalidity = :u"
_DAMAGED = (
    "FROM messages WHERE seq IN (SELECT seq FROM repair_requests) "
    "AND +folder_id = :f AND +uidvalidity = :u"
)
_AWAITING_HEADROOM = sa.text(f"SELECT uid {_WAITING} ORDER BY uid").bindparams(
    waiting=ContentState.AWAITING_HEADROOM.value
)
_AWAITING_REPAIR = sa.text(f"SELECT uid {_DAMAGED} ORDER BY uid")
_HOLDS_BACK = sa.text(
    f"SELECT EXISTS (SELECT 1 {_WAITING}) OR EXISTS (SELECT 1 {_DAMAGED})"
).bindparams(waiting=ContentState.AWAITING_HEADROOM.value)


class SqlHeldBackContent(SqlTables):
    """The held-back and repair part of `SyncStore`."""

    def awaiting_headroom(self, folder_id: int, uidvalidity: int) -> list[int]:
        with self.engine.connect() as c:
            return list(c.execute(_AWAITING_HEADROOM, {"f": folder_id, "u": uidvalidity}).scalars())

    def holds_back(self, folder_id: int, uidvalidity: int) -> bool:
        """Whether any message of the folder awaits storage room or a content repair: one
        query, for a pass that would otherwise find nothing to do."""
        with self.engine.connect() as c:
            return bool(c.execute(_HOLDS_BACK, {"f": folder_id, "u": uidvalidity}).scalar())

    def fill_content(
        self,
        folder_id: int,
        uidvalidity: int,
        uid: int,
        normalized: NormalizedMessage,
        content_key: str,
        *,
        verdict: SenderVerdict | None = None,
        authorship: AuthorshipReading | None = None,
    ) -> None:
        """Complete a row whose content was held back, re-deriving it from the full MIME."""
        with self.engine.begin() as c:
            account_id = account_of(c, folder_id)
            seq = c.execute(
                sa.select(messages.c.seq).where(
                    messages.c.account_id == account_id,
                    messages.c.folder_id == folder_id,
                    messages.c.uidvalidity == uidvalidity,
                    messages.c.uid == uid,
                )
            ).scalar()
            if seq is None:
                return
            c.execute(
                messages.update()
                .where(messages.c.account_id == account_id, messages.c.seq == seq)
                .values(
                    content_state=ContentState.STORED.value,
                    content_key=content_key,
                    **derived_values(normalized),
                )
            )
            for table in (
                participants,
                message_identifiers,
                parts,
                message_bodies,
                repair_requests,
            ):
                c.execute(
                    table.delete().where(table.c.account_id == account_id, table.c.seq == seq)
                )
            children = ChildRows()
            add_child_rows(children, seq, account_id, normalized)
            for table_name, columns, values in children.tables():
                bulk.insert_rows(c, table_name, columns, values)
            search_index.replace_document(c, index_document(account_id, seq, normalized))
            threads.place_new_messages(c, account_id, [seq])
            if verdict is not None or authorship is not None:
                replace_trust(c, [trust_tuple(seq, verdict, authorship)])

    def awaiting_repair(self, folder_id: int, uidvalidity: int) -> list[int]:
        """UIDs in this folder whose stored content was found missing or damaged."""
        with self.engine.connect() as c:
            return list(c.execute(_AWAITING_REPAIR, {"f": folder_id, "u": uidvalidity}).scalars())

    def request_repair(self, seq: int, reason: str) -> None:
        self._record_repair_request(seq, reason)
