"""Taking out of the contact book what only mail in withheld folders supports.

Collection keeps no record of which folder gave an address, so what the book may hold is read
from the mail the store holds: mail of a folder "contributes" a participant the way
collection would have taken it (the sender, and the recipients of mail in Sent; a Junk
folder contributes nobody). A collected address that withheld mail contributes and no visible
mail does goes, with its record when it held no other; a collected name withheld mail gave
and no visible mail gives is replaced by the first name visible mail gives that address, or
by none. What neither kind of mail names any more (mail expunged since) is left as it is:
nothing shows that it came from a withheld folder.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.contact_rows import release
from mailfathom.adapters.sql.schema import (
    contact_addresses,
    contacts,
    folders,
    messages,
    participants,
    same_message,
)
from mailfathom.domain.contact_collection import kept_name
from mailfathom.domain.contacts import ContactOrigin, name_key
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import HeaderRole

_C = contacts.c
_A = contact_addresses.c
_P = participants.c
_F = folders.c
_CHUNK = 500
_RECIPIENTS = [HeaderRole.TO.value, HeaderRole.CC.value, HeaderRole.BCC.value]


def _contributing(account_id: str, *where: sa.ColumnElement[bool]) -> sa.Select[Any]:
    """(address key, name as written, seq) of every participant that the account's mail of
    the folders `where` picks contributes to the book."""
    return (
        sa.select(_P.address_key, _P.display_name, _P.seq)
        .join(messages, same_message(participants, messages))
        .join(folders, _F.folder_id == messages.c.folder_id)
        .where(
            messages.c.account_id == account_id,
            *where,
            sa.or_(_F.role.is_(None), _F.role != FolderRole.JUNK.value),
            sa.or_(
                _P.role == HeaderRole.FROM.value,
                sa.and_(_F.role == FolderRole.SENT.value, _P.role.in_(_RECIPIENTS)),
            ),
        )
    )


def forget_withheld(c: sa.Connection) -> int:
    """See `WithheldContacts.forget_withheld`. Runs in the caller's transaction; answers
    how many records changed. The withheld folders are read first, so the mail read is
    theirs alone (none, on a deployment that withholds nothing). The book is the
    deployment's, so mail of every account counts; it is read an account at a time. The
    store narrows withheld mail to the collected addresses it names, so only their rows
    are read out, however much withheld mail names nobody the book collected."""
    withheld_ids: dict[str, list[int]] = {}
    accounts: set[str] = set()
    for folder_id, account_id, visible in c.execute(
        sa.select(_F.folder_id, _F.account_id, _F.visible_to_tools)
    ):
        accounts.add(account_id)
        if visible is False:
            withheld_ids.setdefault(account_id, []).append(folder_id)
    if not withheld_ids:
        return 0
    in_withheld = [
        _contributing(a, messages.c.folder_id.in_(ids)) for a, ids in withheld_ids.items()
    ]
    named = sa.union(*(s.with_only_columns(_P.address_key) for s in in_withheld))
    candidates = list(
        c.execute(
            sa.select(_A.address_key, _A.contact_id, _C.display_name)
            .join(contacts, _C.contact_id == _A.contact_id)
            .where(
                _C.origin == ContactOrigin.COLLECTED.value,
                _A.address_key.in_(named.scalar_subquery()),
            )
            .order_by(_A.address_key)
        )
    )
    if not candidates:
        return 0
    wanted = [row.address_key for row in candidates]
    hidden = _names(c, in_withheld, wanted)
    visible = _names(
        c, [_contributing(a, _F.visible_to_tools.is_(True)) for a in sorted(accounts)], wanted
    )
    changed: set[uuid.UUID] = set()
    for key, contact_id, display_name in candidates:
        shown = visible.get(key)
        if shown is None:
            release(c, contact_id, key)
            changed.add(contact_id)
        elif display_name and display_name in hidden.get(key, ()) and display_name not in shown:
            name = next((n for n in shown if n), "")
            c.execute(
                contacts.update()
                .where(_C.contact_id == contact_id)
                .values(display_name=name, name_key=name_key(name))
            )
            changed.add(contact_id)
    return len(changed)


def _names(
    c: sa.Connection, contributing: Sequence[sa.Select[Any]], keys: Sequence[str]
) -> dict[str, list[str]]:
    """Address key -> the names (as a record keeps them, "" for none) that mail of the
    statements `contributing` (one per account) gives each of `keys`, in the order the mail
    was stored; a key no such mail names is absent."""
    seen: dict[str, list[tuple[int, str]]] = {}
    for statement in contributing:
        for start in range(0, len(keys), _CHUNK):
            chunk = statement.where(_P.address_key.in_(keys[start : start + _CHUNK]))
            for key, display_name, seq in c.execute(chunk):
                seen.setdefault(key, []).append((seq, kept_name(display_name)))
    return {key: [name for _, name in sorted(named)] for key, named in seen.items()}
