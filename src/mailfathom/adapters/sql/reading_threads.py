"""The messages of conversations as a read lists them: in the scope, each message once."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.message_copies import Copy, one_per_message
from mailfathom.adapters.sql.reading_rows import arrays, chunks, listed, load_senders
from mailfathom.adapters.sql.schema import messages
from mailfathom.app.shared.stored_mail import ThreadMember

_THREADS = {
    array: sa.select(
        messages.c.seq,
        messages.c.stored_email_id,
        messages.c.thread_id,
        messages.c.thread_parent_seq,
        messages.c.thread_position,
        messages.c.subject,
        messages.c.sent_at,
        messages.c.account_id,
        messages.c.folder_id,
        messages.c.content_key,
    )
    .where(
        listed(array, messages.c.account_id, "accounts"),
        listed(array, messages.c.thread_id, "threads"),
        listed(array, messages.c.folder_id, "folders"),
    )
    .order_by(messages.c.thread_id, messages.c.thread_position.asc().nulls_last(), messages.c.seq)
    for array in (False, True)
}


def conversation_members(
    connection: sa.Connection,
    thread_ids: Sequence[uuid.UUID],
    folder_ids: Sequence[int],
    ranks: Mapping[int, int],
    accounts: Iterable[str],
) -> dict[uuid.UUID, list[ThreadMember]]:
    """The members of each conversation lying in `folder_ids` (visible ones of `accounts`,
    ranked by `ranks`), in the conversation's order, each message once (see
    `message_copies`)."""
    bound = {"accounts": sorted(set(accounts)), "folders": list(folder_ids)}
    statement = _THREADS[arrays(connection)]
    rows: list[sa.Row[Any]] = []
    for chunk in chunks(thread_ids):
        rows.extend(connection.execute(statement, {**bound, "threads": list(chunk)}))
    by_seq = {int(r.seq): r for r in rows}
    chosen = one_per_message(
        connection,
        [
            Copy(int(r.seq), r.account_id, int(r.folder_id), r.content_key, r.thread_parent_seq)
            for r in rows
        ],
        ranks,
    )
    senders = load_senders(
        connection, [c.seq for c in chosen], (by_seq[c.seq].account_id for c in chosen)
    )
    found: dict[uuid.UUID, list[ThreadMember]] = {}
    for c in chosen:
        r = by_seq[c.seq]
        found.setdefault(r.thread_id, []).append(
            ThreadMember(
                seq=c.seq,
                stored_email_id=r.stored_email_id,
                parent_seq=c.parent_seq,
                position=r.thread_position,
                subject=r.subject,
                sent_at=r.sent_at,
                sender_address=senders.get(c.seq),
                copies=c.copies,
            )
        )
    return found
