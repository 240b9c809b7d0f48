"""Placing stored messages into conversations, inside the transaction that stores them.

A new message can only join, or join together, conversations that share an identifier with it,
so only those are re-assembled: their members are loaded, the domain assembler runs over them,
and each resulting conversation keeps the identifier most of its members already carried.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import message_identifiers, messages
from mailfathom.domain.conversations import ThreadInput, assemble_conversations

_CHUNK = 500
T = TypeVar("T")


def _chunks(values: Sequence[T]) -> Iterable[list[T]]:
    items = list(values)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def split_ids(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(text.split("\n"))


def join_ids(ids: Sequence[str]) -> str | None:
    return "\n".join(ids) if ids else None


def place_new_messages(connection: sa.Connection, account_id: str, seqs: Sequence[int]) -> None:
    """Re-assemble every conversation the messages `seqs` touch, the messages included."""
    if not seqs:
        return
    identifiers: set[str] = set()
    for chunk in _chunks(seqs):
        identifiers.update(
            connection.execute(
                sa.select(message_identifiers.c.identifier).where(
                    message_identifiers.c.seq.in_(chunk)
                )
            ).scalars()
        )
    touching: set[int] = set(seqs)
    for id_chunk in _chunks(sorted(identifiers)):
        touching.update(
            connection.execute(
                sa.select(message_identifiers.c.seq).where(
                    message_identifiers.c.account_id == account_id,
                    message_identifiers.c.identifier.in_(id_chunk),
                )
            ).scalars()
        )
    thread_ids: set[uuid.UUID] = set()
    for chunk in _chunks(sorted(touching)):
        thread_ids.update(
            t
            for t in connection.execute(
                sa.select(messages.c.thread_id).where(messages.c.seq.in_(chunk))
            ).scalars()
            if t is not None
        )
    members = set(touching)
    for chunk_ids in _chunk_uuids(thread_ids):
        members.update(
            connection.execute(
                sa.select(messages.c.seq).where(messages.c.thread_id.in_(chunk_ids))
            ).scalars()
        )
    rethread(connection, sorted(members))


def _chunk_uuids(values: set[uuid.UUID]) -> Iterable[list[uuid.UUID]]:
    items = sorted(values)
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def rethread(connection: sa.Connection, seqs: Sequence[int]) -> None:
    """Assemble the conversations of exactly these messages and write their placement."""
    rows: list[Any] = []
    for chunk in _chunks(seqs):
        rows.extend(
            connection.execute(
                sa.select(
                    messages.c.seq,
                    messages.c.stored_email_id,
                    messages.c.message_id_header,
                    messages.c.in_reply_to,
                    messages.c.references_header,
                    messages.c.sent_at,
                    messages.c.thread_id,
                    messages.c.thread_parent_seq,
                    messages.c.thread_position,
                ).where(messages.c.seq.in_(chunk))
            ).all()
        )
    if not rows:
        return
    by_key = {str(r.stored_email_id): r for r in rows}
    inputs = [
        ThreadInput(
            key=str(r.stored_email_id),
            message_id=r.message_id_header,
            in_reply_to=split_ids(r.in_reply_to),
            references=split_ids(r.references_header),
            sent_at=_aware(r.sent_at),
        )
        for r in rows
    ]
    conversations = assemble_conversations(inputs)
    # The oldest rows decide first, so an existing conversation keeps its identifier when
    # mail joins it, and a merge keeps the identifier of the conversation stored first.
    conversations.sort(key=lambda c: min(by_key[p.key].seq for p in c.members))
    taken: set[uuid.UUID] = set()
    updates: list[dict[str, object]] = []
    for conversation in conversations:
        held = Counter(
            by_key[p.key].thread_id
            for p in conversation.members
            if by_key[p.key].thread_id is not None and by_key[p.key].thread_id not in taken
        )
        if held:
            best = max(held.values())
            candidates = [t for t, n in held.items() if n == best]
            thread_id = min(
                candidates,
                key=lambda t: min(
                    by_key[p.key].seq for p in conversation.members if by_key[p.key].thread_id == t
                ),
            )
        else:
            thread_id = uuid.uuid4()
        taken.add(thread_id)
        for placement in conversation.members:
            row = by_key[placement.key]
            parent = by_key[placement.parent_key].seq if placement.parent_key else None
            if (row.thread_id, row.thread_parent_seq, row.thread_position) == (
                thread_id,
                parent,
                placement.position,
            ):
                continue  # already placed so: a member of a conversation new mail joined
            updates.append(
                {
                    "b_seq": row.seq,
                    "thread_id": thread_id,
                    "thread_parent_seq": parent,
                    "thread_position": placement.position,
                }
            )
    if not updates:
        return
    connection.execute(
        messages.update()
        .where(messages.c.seq == sa.bindparam("b_seq"))
        .values(
            thread_id=sa.bindparam("thread_id"),
            thread_parent_seq=sa.bindparam("thread_parent_seq"),
            thread_position=sa.bindparam("thread_position"),
        ),
        updates,
    )


def rederive_account(connection: sa.Connection, account_id: str) -> int:
    """Re-assemble every conversation of an account from its stored identifiers."""
    seqs = list(
        connection.execute(
            sa.select(messages.c.seq).where(messages.c.account_id == account_id)
        ).scalars()
    )
    rethread(connection, seqs)
    return len(seqs)
