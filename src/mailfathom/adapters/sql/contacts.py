"""The contact book on SQLite and PostgreSQL: `ContactBook`.

Which contact holds an address is decided by the primary key of `contact_addresses`, the
address's comparison form: of two writes claiming one address the second fails on the key,
and is answered with the holder the first one wrote. One record's rows are read and written
by `contact_rows`; the peer records, collection and what the book forgets of withheld mail
are modules of their own, each run in a transaction this class opens.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import (
    contact_collection,
    contact_peers,
    contact_rows,
    contact_withholding,
)
from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.adapters.sql.scrubbing import scrub, zeroing_transaction
from mailfathom.app.contacts.cards import Restoration
from mailfathom.app.contacts.ports import (
    BookPosition,
    ContactWrite,
    Erasure,
    NewContact,
    PeerEntry,
    PeerUpkeep,
    WriteState,
)
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import (
    Contact,
    ContactOrigin,
    ContactRecord,
    ContactWriter,
    address_key,
    name_key,
)

_C = contacts.c
_A = contact_addresses.c


class SqlContactBook:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine
        self._postgres = engine.dialect.name == "postgresql"

    def create(self, new: NewContact) -> ContactWrite:
        keys = [address_key(a) for a in new.record.addresses]
        try:
            with zeroing_transaction(self._engine) as c:
                holder = contact_rows.holder(c, keys, None)
                if holder is not None:
                    return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
                contact_rows.insert_contact(c, new, None)
                written = contact_rows.read(c, new.contact_id)
        except sa.exc.IntegrityError:
            return self._held_after_race(keys, None)
        return ContactWrite(WriteState.WRITTEN, contact=written)

    def find(self, contact_id: uuid.UUID) -> Contact | None:
        with self._engine.connect() as c:
            return contact_rows.read(c, contact_id)

    def find_by_address(self, address: str) -> Contact | None:
        with self._engine.connect() as c:
            holder = c.execute(
                sa.select(_A.contact_id).where(_A.address_key == address_key(address))
            ).scalar()
            return None if holder is None else contact_rows.read(c, holder)

    def page(
        self,
        search: str | None,
        origin: ContactOrigin | None,
        after: BookPosition | None,
        limit: int,
    ) -> list[Contact]:
        name = self._ordered(_C.name_key)
        query = sa.select(contacts).order_by(name, _C.contact_id).limit(limit)
        if origin is not None:
            query = query.where(_C.origin == origin.value)
        if after is not None:
            mark = self._ordered(sa.literal(after.name_key, sa.Text))
            query = query.where(
                sa.or_(name > mark, sa.and_(name == mark, _C.contact_id > after.contact_id))
            )
        if search:
            by_address = sa.select(_A.contact_id).where(
                _A.address_key.contains(address_key(search), autoescape=True)
            )
            query = query.where(
                sa.or_(
                    _C.name_key.contains(name_key(search), autoescape=True),
                    _C.contact_id.in_(by_address),
                )
            )
        with self._engine.connect() as c:
            rows = list(c.execute(query).mappings())
            held = contact_rows.addresses_of(c, [row["contact_id"] for row in rows])
        return [contact_rows.contact_of(row, held.get(row["contact_id"], [])) for row in rows]

    def amend(
        self,
        contact_id: uuid.UUID,
        record: ContactRecord,
        at: datetime,
        writer: ContactWriter = ContactWriter.CALLER,
    ) -> ContactWrite:
        keys = [address_key(a) for a in record.addresses]
        try:
            with zeroing_transaction(self._engine) as c:
                origin = c.execute(
                    self._locked(sa.select(_C.origin).where(_C.contact_id == contact_id))
                ).scalar()
                if origin is None:
                    return ContactWrite(WriteState.NOT_FOUND)
                if origin != ContactOrigin.ASSERTED.value:
                    return ContactWrite(WriteState.WAS_COLLECTED)
                holder = contact_rows.holder(c, keys, contact_id)
                if holder is not None:
                    return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
                writers = contact_rows.writers_of(c, contact_id)
                c.execute(contact_addresses.delete().where(_A.contact_id == contact_id))
                contact_rows.insert_addresses(c, contact_id, record.addresses, writer, writers)
                c.execute(
                    contacts.update()
                    .where(_C.contact_id == contact_id)
                    .values(amended_at=at, **contact_rows.record_values(record))
                )
                written = contact_rows.read(c, contact_id)
        except sa.exc.IntegrityError:
            return self._held_after_race(keys, contact_id)
        self._scrub()
        return ContactWrite(WriteState.WRITTEN, contact=written)

    def promote(
        self, contact_id: uuid.UUID, writer: ContactWriter = ContactWriter.CALLER
    ) -> WriteState:
        collected = ContactOrigin.COLLECTED.value
        with zeroing_transaction(self._engine) as c:
            changed = c.execute(
                contacts.update()
                .where(_C.contact_id == contact_id, _C.origin == collected, _C.display_name != "")
                .values(origin=ContactOrigin.ASSERTED.value)
            ).rowcount
            if not changed:
                origin = c.execute(
                    self._locked(sa.select(_C.origin).where(_C.contact_id == contact_id))
                ).scalar()
                if origin is None:
                    return WriteState.NOT_FOUND
                if origin == collected:
                    return WriteState.UNNAMED
            if writer is ContactWriter.OPERATOR:
                changed += c.execute(
                    contact_addresses.update()
                    .where(_A.contact_id == contact_id, _A.written_by.in_(_TAKEN_ON))
                    .values(written_by=ContactWriter.OPERATOR.value)
                ).rowcount
        return WriteState.WRITTEN if changed else WriteState.ALREADY_ASSERTED

    def erase(self, contact_id: uuid.UUID) -> Erasure:
        with zeroing_transaction(self._engine) as c:
            erasure = contact_rows.erase(c, contact_id)
        if erasure.was_held:
            self._scrub()
        return erasure

    def held_keys(
        self,
        keys: Collection[str],
        origins: frozenset[ContactOrigin],
        writers: frozenset[ContactWriter] | None = None,
    ) -> frozenset[str]:
        wanted = sorted(set(keys))
        if not wanted or not origins or writers == frozenset():
            return frozenset()
        found: set[str] = set()
        with self._engine.connect() as c:
            for start in range(0, len(wanted), _CHUNK):
                query = (
                    sa.select(_A.address_key)
                    .join(contacts, _C.contact_id == _A.contact_id)
                    .where(
                        _A.address_key.in_(wanted[start : start + _CHUNK]),
                        _C.origin.in_([o.value for o in origins]),
                    )
                )
                if writers is not None:
                    query = query.where(_A.written_by.in_([w.value for w in writers]))
                found.update(c.execute(query).scalars())
        return frozenset(found)

    def writers(
        self, contact_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, frozenset[ContactWriter]]:
        """Who wrote the addresses of each of these contacts (a contact not held: absent)."""
        wanted = sorted(set(contact_ids))
        found: dict[uuid.UUID, set[ContactWriter]] = {}
        with self._engine.connect() as c:
            for start in range(0, len(wanted), _CHUNK):
                rows = c.execute(
                    sa.select(_A.contact_id, _A.written_by)
                    .where(_A.contact_id.in_(wanted[start : start + _CHUNK]))
                    .distinct()
                )
                for contact_id, written_by in rows:
                    found.setdefault(contact_id, set()).add(ContactWriter(written_by))
        return {k: frozenset(v) for k, v in found.items()}

    def keep_peers(self, peers: Sequence[PeerEntry], at: datetime) -> PeerUpkeep:
        with zeroing_transaction(self._engine) as c:
            upkeep = contact_peers.keep_peers(c, peers, at)
        if upkeep.written or upkeep.erased:
            self._scrub()
        return upkeep

    def restore(self, new: NewContact, amended_at: datetime | None) -> Restoration:
        keys = [address_key(a) for a in new.record.addresses]
        try:
            with zeroing_transaction(self._engine) as c:
                held = contact_rows.restore_conflict(c, new.contact_id, keys)
                if held is not None:
                    return held
                contact_rows.insert_contact(c, new, amended_at)
        except sa.exc.IntegrityError:
            with self._engine.connect() as c:
                held = contact_rows.restore_conflict(c, new.contact_id, keys)
            if held is None:
                raise
            return held
        return Restoration.WRITTEN

    def collect(self, seen: Sequence[SeenPerson], at: datetime) -> int:
        return contact_collection.collect(self._engine, seen, at)

    def forget_withheld(self) -> int:
        with zeroing_transaction(self._engine) as c:
            changed = contact_withholding.forget_withheld(c)
        if changed:
            self._scrub()
        return changed

    def _scrub(self) -> None:
        """After a committed write that dropped something of a person (an erasure, an
        amendment, a peer rewritten or gone): nothing of what it dropped stays in the
        database's files."""
        scrub(self._engine, (contacts.name, contact_addresses.name))

    def _held_after_race(self, keys: list[str], own: uuid.UUID | None) -> ContactWrite:
        """A write lost a race on an address key: answer the contact that won it. On
        PostgreSQL the refused row is left dead in the table, so it is scrubbed too."""
        self._scrub()
        with self._engine.connect() as c:
            holder = contact_rows.holder(c, keys, own)
        if holder is None:
            raise RuntimeError("an address key conflict left no holder")
        return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)

    def _ordered(self, column: Any) -> Any:
        """The name key compared byte by byte on both backends, so a walk's order does not
        depend on a database's locale."""
        return column.collate("C") if self._postgres else column

    def _locked(self, query: sa.Select[Any]) -> sa.Select[Any]:
        return query.with_for_update() if self._postgres else query


_CHUNK = 500
# What the operator's promotion takes on: addresses nobody of the deployment vouched for yet.
_TAKEN_ON = (ContactWriter.CALLER.value, ContactWriter.COLLECTION.value)
