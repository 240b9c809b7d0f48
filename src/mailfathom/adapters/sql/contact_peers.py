"""The peer records (every local account in the book) kept in step with the configuration,
in one transaction: see `ContactBook.keep_peers`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.contact_rows import (
    erase,
    insert_addresses,
    read,
    record_values,
    release,
)
from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.app.contacts.ports import PeerEntry, PeerUpkeep
from mailfathom.domain.contacts import ContactOrigin, ContactRecord, ContactWriter, address_key

_C = contacts.c
_A = contact_addresses.c


def keep_peers(c: sa.Connection, peers: Sequence[PeerEntry], at: datetime) -> PeerUpkeep:
    """Erase the record of every peer no longer configured, and write each one that is."""
    wanted = {p.account_id for p in peers}
    erased = written = left = 0
    rows = c.execute(
        sa.select(_C.peer_account_id, _C.contact_id).where(_C.peer_account_id.is_not(None))
    )
    held: dict[str, uuid.UUID] = {row[0]: row[1] for row in rows}
    for account_id, contact_id in held.items():
        if account_id not in wanted:
            erase(c, contact_id)
            erased += 1
    for peer in peers:
        outcome = _keep_peer(c, peer, held.get(peer.account_id), at)
        written += outcome[0]
        left += outcome[1]
    return PeerUpkeep(written=written, erased=erased, left_with_owner=left)


def _keep_peer(
    c: sa.Connection, peer: PeerEntry, own: uuid.UUID | None, at: datetime
) -> tuple[int, int]:
    """Write one peer's record; answers (records written, addresses left with an owner)."""
    spelt = {address_key(a): a for a in peer.addresses}
    holders = {
        key: (holder, origin)
        for key, holder, origin in c.execute(
            sa.select(_A.address_key, _A.contact_id, _C.origin)
            .join(contacts, _C.contact_id == _A.contact_id)
            .where(_A.address_key.in_(list(spelt)))
        )
    }
    kept: list[str] = []
    left = 0
    for key, address in spelt.items():
        holder = holders.get(key)
        if holder is None or holder[0] == own:
            kept.append(address)
        elif holder[1] == ContactOrigin.COLLECTED.value:
            release(c, holder[0], key)
            kept.append(address)
        else:
            left += 1
    current = None if own is None else read(c, own)
    if not kept:
        if own is not None:
            erase(c, own)
        return 0, left
    preferred = next((a for a in kept if address_key(a) == address_key(peer.preferred)), kept[0])
    record = ContactRecord(
        peer.display_name[:256], tuple(kept), preferred, current.note if current else None
    )
    if current is None:
        fresh = uuid.uuid4()
        c.execute(
            contacts.insert().values(
                contact_id=fresh,
                origin=ContactOrigin.ASSERTED.value,
                peer_account_id=peer.account_id,
                recorded_at=at,
                amended_at=None,
                **record_values(record),
            )
        )
        insert_addresses(c, fresh, kept, ContactWriter.PEER)
        return 1, left
    if (
        current.display_name == record.display_name
        and current.preferred_address == preferred
        and sorted(current.addresses) == sorted(kept)
        and current.origin is ContactOrigin.ASSERTED
    ):
        return 0, left
    c.execute(contact_addresses.delete().where(_A.contact_id == current.contact_id))
    insert_addresses(c, current.contact_id, kept, ContactWriter.PEER)
    c.execute(
        contacts.update()
        .where(_C.contact_id == current.contact_id)
        .values(origin=ContactOrigin.ASSERTED.value, amended_at=at, **record_values(record))
    )
    return 1, left
