"""Messages whose content is held back (awaiting storage room) or awaiting a repair."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class _Questions:
    """The statements on held-back messages, in one dialect's words.

    They start from the rare rows: the unary `+` keeps SQLite from walking a whole folder
    (or account) by its (folder, UIDVALIDITY) or account index to find the few rows in a
    given state or with a repair request; those are looked up one by one instead. They name
    the folder's account (`:a`) on every table, which PostgreSQL cannot take a `+` on a
    text column for, and needs to read one account's partitions."""

    awaiting_headroom: sa.TextClause
    awaiting_repair: sa.TextClause
    holds_back: sa.TextClause


@functools.cache
def _questions(dialect: str) -> _Questions:
    plus = "+" if dialect == "sqlite" else ""
    mine = f"{plus}messages.account_id = :a AND +folder_id = :f AND +uidvalidity = :u"
    waiting = f"FROM messages WHERE content_state = :waiting AND {mine}"
    damaged = (
        "FROM messages WHERE seq IN (SELECT seq FROM repair_requests "
        f"WHERE repair_requests.account_id = :a) AND {mine}"
    )
    headroom = ContentState.AWAITING_HEADROOM.value
    return _Questions(
        awaiting_headroom=sa.text(f"SELECT uid {waiting} ORDER BY uid").bindparams(
            waiting=headroom
        ),
        awaiting_repair=sa.text(f"SELECT uid {damaged} ORDER BY uid"),
        holds_back=sa.text(
            f"SELECT EXISTS (SELECT 1 {waiting}) OR EXISTS (SELECT 1 {damaged})"
        ).bindparams(waiting=headroom),
    )


class SqlHeldBackContent(SqlTables):
    """The held-back and repair part of `SyncStore`."""

    def _asked(self, question: sa.TextClause, folder_id: int, uidvalidity: int) -> list[Any]:
        """The first column of each row `question` answers about the folder."""
        with self.engine.connect() as c:
            bound = {"a": account_of(c, folder_id), "f": folder_id, "u": uidvalidity}
            return list(c.execute(question, bound).scalars())

    def awaiting_headroom(self, folder_id: int, uidvalidity: int) -> list[int]:
        question = _questions(self._dialect).awaiting_headroom
        return self._asked(question, folder_id, uidvalidity)

    def holds_back(self, folder_id: int, uidvalidity: int) -> bool:
        """Whether any message of the folder awaits storage room or a content repair: one
        question, for a pass that would otherwise find nothing to do."""
        question = _questions(self._dialect).holds_back
        return bool(self._asked(question, folder_id, uidvalidity)[0])

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
                replace_trust(c, account_id, [trust_tuple(seq, verdict, authorship)])

    def awaiting_repair(self, folder_id: int, uidvalidity: int) -> list[int]:
        """UIDs in this folder whose stored content was found missing or damaged."""
        question = _questions(self._dialect).awaiting_repair
        return self._asked(question, folder_id, uidvalidity)

    def request_repair(self, account_id: str, seq: int, reason: str) -> None:
        self._record_repair_request(account_id, seq, reason)
