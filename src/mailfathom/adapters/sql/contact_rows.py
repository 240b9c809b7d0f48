"""Reading and writing one contact's rows (the record and its addresses) inside a transaction
the caller holds; the book (`contacts`), its peer records (`contact_peers`) and what it forgets
of withheld mail (`contact_withholding`) are built on these."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.app.contacts.cards import Restoration
from mailfathom.app.contacts.ports import Erasure, NewContact
from mailfathom.domain.contacts import (
    Contact,
    ContactOrigin,
    ContactRecord,
    ContactWriter,
    address_key,
    name_key,
    ordered_addresses,
)

_C = contacts.c
_A = contact_addresses.c


def erase(c: sa.Connection, contact_id: uuid.UUID) -> Erasure:
    erased = c.execute(contact_addresses.delete().where(_A.contact_id == contact_id))
    gone = c.execute(contacts.delete().where(_C.contact_id == contact_id))
    return Erasure(was_held=gone.rowcount == 1, addresses_erased=erased.rowcount)


def release(c: sa.Connection, contact_id: uuid.UUID, key: str) -> None:
    """Take one address off a record; a record left with none is erased, and one whose
    preferred address went prefers the first remaining one."""
    c.execute(contact_addresses.delete().where(_A.address_key == key))
    remaining = sorted(
        c.execute(sa.select(_A.address).where(_A.contact_id == contact_id)).scalars(),
        key=address_key,
    )
    if not remaining:
        erase(c, contact_id)
        return
    preferred = c.execute(
        sa.select(_C.preferred_address).where(_C.contact_id == contact_id)
    ).scalar_one()
    if address_key(preferred) == key:
        c.execute(
            contacts.update()
            .where(_C.contact_id == contact_id)
            .values(preferred_address=remaining[0])
        )


def record_values(record: ContactRecord) -> dict[str, Any]:
    return {
        "display_name": record.display_name,
        "name_key": name_key(record.display_name),
        "preferred_address": record.preferred_address,
        "note": record.note,
    }


def insert_contact(c: sa.Connection, new: NewContact, amended_at: datetime | None) -> None:
    c.execute(
        contacts.insert().values(
            contact_id=new.contact_id,
            origin=new.origin.value,
            peer_account_id=new.peer_account_id,
            recorded_at=new.recorded_at,
            amended_at=amended_at,
            **record_values(new.record),
        )
    )
    insert_addresses(c, new.contact_id, new.record.addresses, new.written_by)


def insert_addresses(
    c: sa.Connection,
    contact_id: uuid.UUID,
    held: Iterable[str],
    writer: ContactWriter,
    kept: Mapping[str, str] | None = None,
) -> None:
    """Rows in ascending key order, the order collection writes them in too: on PostgreSQL
    an insert waits on another transaction's uncommitted row of the same key, so writers
    taking keys in one order cannot wait on each other in a cycle. An address `kept` names
    (by key) keeps the writer it names; every other one is `writer`'s."""
    earlier = kept or {}
    rows = sorted(
        (
            {
                "address_key": address_key(a),
                "contact_id": contact_id,
                "address": a,
                "written_by": earlier.get(address_key(a), writer.value),
            }
            for a in held
        ),
        key=lambda row: str(row["address_key"]),
    )
    c.execute(contact_addresses.insert(), rows)


def writers_of(c: sa.Connection, contact_id: uuid.UUID) -> dict[str, str]:
    """Address key -> who wrote it, for the addresses a contact holds."""
    rows = c.execute(sa.select(_A.address_key, _A.written_by).where(_A.contact_id == contact_id))
    return {str(key): str(written_by) for key, written_by in rows}


def restore_conflict(
    c: sa.Connection, contact_id: uuid.UUID, keys: list[str]
) -> Restoration | None:
    held = c.execute(sa.select(_C.contact_id).where(_C.contact_id == contact_id)).first()
    if held is not None:
        return Restoration.IDENTITY_HELD
    if holder(c, keys, None) is not None:
        return Restoration.ADDRESS_HELD
    return None


def holder(c: sa.Connection, keys: list[str], own: uuid.UUID | None) -> uuid.UUID | None:
    query = sa.select(_A.contact_id).where(_A.address_key.in_(keys))
    if own is not None:
        query = query.where(_A.contact_id != own)
    found: uuid.UUID | None = c.execute(query.order_by(_A.address_key).limit(1)).scalar()
    return found


def addresses_of(c: sa.Connection, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    held: dict[uuid.UUID, list[str]] = {}
    if not ids:
        return held
    rows = c.execute(sa.select(_A.contact_id, _A.address).where(_A.contact_id.in_(ids)))
    for contact_id, address in rows:
        held.setdefault(contact_id, []).append(address)
    return held


def read(c: sa.Connection, contact_id: uuid.UUID) -> Contact | None:
    row = c.execute(sa.select(contacts).where(_C.contact_id == contact_id)).mappings().first()
    if row is None:
        return None
    return contact_of(row, addresses_of(c, [contact_id]).get(contact_id, []))


def contact_of(row: Any, held: list[str]) -> Contact:
    preferred: str = row["preferred_address"]
    return Contact(
        contact_id=row["contact_id"],
        display_name=row["display_name"],
        addresses=ordered_addresses(preferred, held),
        preferred_address=preferred,
        note=row["note"],
        origin=ContactOrigin(row["origin"]),
        recorded_at=row["recorded_at"],
        amended_at=row["amended_at"],
        peer_account_id=row["peer_account_id"],
    )
