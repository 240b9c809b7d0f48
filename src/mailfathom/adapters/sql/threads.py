"""Placing stored messages into conversations, inside the transaction that stores them.

A new message can only join, or join together, conversations that share an identifier with it,
so only those are re-assembled: their members are loaded, the domain assembler runs over them,
and each resulting conversation keeps the identifier most of its members already carried.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import sqlalchemy as sa

from mailfathom.adapters.sql import bulk
from mailfathom.adapters.sql.schema import messages
from mailfathom.domain.conversations import ThreadInput, assemble_conversations

_CHUNK = 500
T = TypeVar("T")


def _chunks(values: Sequence[T]) -> Iterable[list[T]]:
    items = list(values)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def split_ids(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(text.split("\n"))


def join_ids(ids: Sequence[str]) -> str | None:
    return "\n".join(ids) if ids else None


def place_new_messages(connection: sa.Connection, account_id: str, seqs: Sequence[int]) -> None:
    """Re-assemble every conversation the messages `seqs` touch, the messages included.

    Each step is one indexed look-up per chunk, with the driver's own values: the new
    messages' identifiers, the messages sharing one, their conversations, and every member of
    those."""
    if not seqs:
        return
    identifiers = _column_values(
        connection,
        "SELECT identifier FROM message_identifiers WHERE account_id = {mark} AND seq IN ({})",
        seqs,
        (account_id,),
    )
    touching: set[int] = set(seqs)
    touching.update(
        _column_values(
            connection,
            "SELECT seq FROM message_identifiers WHERE account_id = {mark} AND identifier IN ({})",
            sorted(identifiers),
            (account_id,),
        )
    )
    thread_ids = _column_values(
        connection,
        "SELECT thread_id FROM messages WHERE account_id = {mark} AND seq IN ({})",
        sorted(touching),
        (account_id,),
    )
    thread_ids.discard(None)
    members = set(touching)
    members.update(
        _column_values(
            connection,
            "SELECT seq FROM messages WHERE account_id = {mark} AND thread_id IN ({})",
            sorted(thread_ids),
            (account_id,),
        )
    )
    rethread(connection, account_id, sorted(members))


def _column_values(
    connection: sa.Connection,
    statement: str,
    values: Sequence[Any],
    leading: tuple[Any, ...] = (),
) -> set[Any]:
    """The first column of `statement` run over `values` in chunks: `{}` stands for the
    chunk's placeholders and `{mark}` for one more, bound to `leading`."""
    mark = bulk.placeholder(connection)
    found: set[Any] = set()
    for chunk in _chunks(values):
        sql = statement.format(", ".join([mark] * len(chunk)), mark=mark)
        found.update(row[0] for row in connection.exec_driver_sql(sql, (*leading, *chunk)))
    return found


_PLACEMENT_COLUMNS = (
    "seq, stored_email_id, message_id_header, in_reply_to, references_header, sent_at, "
    "thread_id, thread_parent_seq, thread_position"
)


def rethread(connection: sa.Connection, account_id: str, seqs: Sequence[int]) -> None:
    """Assemble the conversations of exactly these messages of `account_id` and write their
    placement.

    Rows are read and written with the driver's own values (a conversation identifier is
    compared as the driver holds it), converting only what the assembler needs: this runs
    in every commit of a synchronization."""
    dialect = connection.dialect
    read_time = messages.c.sent_at.type.dialect_impl(dialect).result_processor(dialect, None)
    write_id = messages.c.thread_id.type.dialect_impl(dialect).bind_processor(dialect)
    mark = bulk.placeholder(connection)
    rows: list[Any] = []
    for chunk in _chunks(seqs):
        rows.extend(
            connection.exec_driver_sql(
                f"SELECT {_PLACEMENT_COLUMNS} FROM messages "
                f"WHERE account_id = {mark} AND seq IN ({', '.join([mark] * len(chunk))})",
                (account_id, *chunk),
            ).all()
        )
    if not rows:
        return
    by_key = {str(r[1]): r for r in rows}
    inputs = [
        ThreadInput(
            key=key,
            message_id=r[2],
            in_reply_to=split_ids(r[3]),
            references=split_ids(r[4]),
            sent_at=read_time(r[5]) if read_time is not None else r[5],
        )
        for key, r in by_key.items()
    ]
    conversations = assemble_conversations(inputs)
    # The oldest rows decide first, so an existing conversation keeps its identifier when
    # mail joins it, and a merge keeps the identifier of the conversation stored first.
    conversations.sort(key=lambda c: min(by_key[p.key][0] for p in c.members))
    taken: set[Any] = set()
    updates: list[tuple[Any, ...]] = []
    for conversation in conversations:
        held = Counter(
            by_key[p.key][6]
            for p in conversation.members
            if by_key[p.key][6] is not None and by_key[p.key][6] not in taken
        )
        if held:
            best = max(held.values())
            candidates = [t for t, n in held.items() if n == best]
            thread_id = min(
                candidates,
                key=lambda t: min(
                    by_key[p.key][0] for p in conversation.members if by_key[p.key][6] == t
                ),
            )
        else:
            fresh = uuid.uuid4()
            thread_id = write_id(fresh) if write_id is not None else fresh
        taken.add(thread_id)
        for placement in conversation.members:
            row = by_key[placement.key]
            parent = by_key[placement.parent_key][0] if placement.parent_key else None
            if (row[6], row[7], row[8]) == (thread_id, parent, placement.position):
                continue  # already placed so: a member of a conversation new mail joined
            updates.append((thread_id, parent, placement.position, account_id, row[0]))
    if updates:
        connection.exec_driver_sql(
            f"UPDATE messages SET thread_id = {mark}, thread_parent_seq = {mark}, "
            f"thread_position = {mark} WHERE account_id = {mark} AND seq = {mark}",
            updates,
        )


def rederive_account(connection: sa.Connection, account_id: str) -> int:
    """Re-assemble every conversation of an account from its stored identifiers."""
    seqs = list(
        connection.execute(
            sa.select(messages.c.seq).where(messages.c.account_id == account_id)
        ).scalars()
    )
    rethread(connection, account_id, seqs)
    return len(seqs)
