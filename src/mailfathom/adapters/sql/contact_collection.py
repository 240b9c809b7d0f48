"""Collecting the people mail names into the contact book, one set-based write per batch.

A fresh record is written for every address nobody held when the transaction read the book;
its address row is then inserted with the dialect's "on conflict do nothing" on the address
key, so an address a racing writer claimed in between stays that writer's, and the record
written for it (holding no address) is taken out again in the same transaction. Keys are
written in one order, so two collections of overlapping people wait on each other rather
than deadlock.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.adapters.sql.scrubbing import zeroing_transaction
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactWriter, name_key

_C = contacts.c
_A = contact_addresses.c
_CHUNK = 500
_COLLECTED = ContactOrigin.COLLECTED.value
_COLLECTION = ContactWriter.COLLECTION.value


def collect(engine: sa.Engine, seen: Sequence[SeenPerson], at: datetime) -> int:
    """See `ContactBook.collect`."""
    people = _distinct(seen)
    if not people:
        return 0
    keys = sorted(people)
    with zeroing_transaction(engine) as c:
        held = _held(c, keys)
        fresh = {key: uuid.uuid4() for key in keys if key not in held}
        written = _write_fresh(c, engine.dialect.name, people, fresh, at)
        named = [
            {"b_id": contact_id, "b_name": people[key].display_name}
            for key, (contact_id, origin, display_name) in held.items()
            if origin == _COLLECTED and not display_name and people[key].display_name
        ]
        if named:
            c.execute(
                contacts.update()
                .where(
                    _C.contact_id == sa.bindparam("b_id"),
                    _C.origin == _COLLECTED,
                    _C.display_name == "",
                )
                .values(display_name=sa.bindparam("b_name"), name_key=sa.bindparam("b_key")),
                [{**row, "b_key": name_key(str(row["b_name"]))} for row in named],
            )
    return written


def _distinct(seen: Sequence[SeenPerson]) -> dict[str, SeenPerson]:
    """Each address once, with the first non-empty name seen for it."""
    people: dict[str, SeenPerson] = {}
    for person in seen:
        held = people.get(person.key)
        if held is None or (not held.display_name and person.display_name):
            people[person.key] = SeenPerson(
                held.address if held else person.address, person.display_name
            )
    return people


def _held(c: sa.Connection, keys: list[str]) -> dict[str, tuple[uuid.UUID, str, str]]:
    """Address key -> (holder, its origin, its name) for the keys a record holds."""
    held: dict[str, tuple[uuid.UUID, str, str]] = {}
    for start in range(0, len(keys), _CHUNK):
        rows = c.execute(
            sa.select(_A.address_key, _A.contact_id, _C.origin, _C.display_name)
            .join(contacts, _C.contact_id == _A.contact_id)
            .where(_A.address_key.in_(keys[start : start + _CHUNK]))
        )
        for key, contact_id, origin, display_name in rows:
            held[key] = (contact_id, origin, display_name)
    return held


def _write_fresh(
    c: sa.Connection,
    dialect: str,
    people: dict[str, SeenPerson],
    fresh: dict[str, uuid.UUID],
    at: datetime,
) -> int:
    """Write a record per fresh key; answers how many kept their address."""
    if not fresh:
        return 0
    c.execute(
        contacts.insert(),
        [
            {
                "contact_id": contact_id,
                "display_name": people[key].display_name,
                "name_key": name_key(people[key].display_name),
                "preferred_address": people[key].address,
                "note": None,
                "origin": _COLLECTED,
                "peer_account_id": None,
                "recorded_at": at,
                "amended_at": None,
            }
            for key, contact_id in fresh.items()
        ],
    )
    c.execute(
        _insert_ignoring_held(dialect),
        [
            {
                "address_key": key,
                "contact_id": contact_id,
                "address": people[key].address,
                "written_by": _COLLECTION,
            }
            for key, contact_id in fresh.items()
        ],
    )
    ids = list(fresh.values())
    lost = 0
    for start in range(0, len(ids), _CHUNK):
        holding = sa.select(_A.contact_id).where(_A.contact_id == _C.contact_id).exists()
        gone = c.execute(
            contacts.delete().where(_C.contact_id.in_(ids[start : start + _CHUNK]), ~holding)
        )
        lost += gone.rowcount
    return len(ids) - lost


def _insert_ignoring_held(dialect: str) -> Any:
    """An insert of address rows that skips a key already held, by the dialect's own
    conflict clause."""
    if dialect == "postgresql":
        return postgresql.insert(contact_addresses).on_conflict_do_nothing(
            index_elements=[_A.address_key]
        )
    return sqlite.insert(contact_addresses).on_conflict_do_nothing(index_elements=[_A.address_key])
