"""The contact book on SQLite and PostgreSQL: `ContactBook`.

Which contact holds an address is decided by the primary key of `contact_addresses`, the
address's comparison form: of two writes claiming one address the second fails on the key,
and is answered with the holder the first one wrote.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import contact_collection, contact_withholding
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
    ordered_addresses,
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
                holder = _holder(c, keys, None)
                if holder is not None:
                    return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
                _insert_contact(c, new, None)
                written = _read(c, new.contact_id)
        except sa.exc.IntegrityError:
            return self._held_after_race(keys, None)
        return ContactWrite(WriteState.WRITTEN, contact=written)

    def find(self, contact_id: uuid.UUID) -> Contact | None:
        with self._engine.connect() as c:
            return _read(c, contact_id)

    def find_by_address(self, address: str) -> Contact | None:
        with self._engine.connect() as c:
            holder = c.execute(
                sa.select(_A.contact_id).where(_A.address_key == address_key(address))
            ).scalar()
            return None if holder is None else _read(c, holder)

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
            held = _addresses_of(c, [row["contact_id"] for row in rows])
        return [_contact(row, held.get(row["contact_id"], [])) for row in rows]

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
                holder = _holder(c, keys, contact_id)
                if holder is not None:
                    return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
                writers = _writers_of(c, contact_id)
                c.execute(contact_addresses.delete().where(_A.contact_id == contact_id))
                _insert_addresses(c, contact_id, record.addresses, writer, writers)
                c.execute(
                    contacts.update()
                    .where(_C.contact_id == contact_id)
                    .values(amended_at=at, **_record_values(record))
                )
                written = _read(c, contact_id)
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
            erasure = _erase(c, contact_id)
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

    def keep_peers(self, peers: Sequence[PeerEntry], at: datetime) -> PeerUpkeep:
        wanted = {p.account_id for p in peers}
        erased = written = left = 0
        with zeroing_transaction(self._engine) as c:
            rows = c.execute(
                sa.select(_C.peer_account_id, _C.contact_id).where(_C.peer_account_id.is_not(None))
            )
            held: dict[str, uuid.UUID] = {row[0]: row[1] for row in rows}
            for account_id, contact_id in held.items():
                if account_id not in wanted:
                    _erase(c, contact_id)
                    erased += 1
            for peer in peers:
                outcome = _keep_peer(c, peer, held.get(peer.account_id), at)
                written += outcome[0]
                left += outcome[1]
        if written or erased:
            self._scrub()
        return PeerUpkeep(written=written, erased=erased, left_with_owner=left)

    def restore(self, new: NewContact, amended_at: datetime | None) -> Restoration:
        keys = [address_key(a) for a in new.record.addresses]
        try:
            with zeroing_transaction(self._engine) as c:
                held = _restore_conflict(c, new.contact_id, keys)
                if held is not None:
                    return held
                _insert_contact(c, new, amended_at)
        except sa.exc.IntegrityError:
            with self._engine.connect() as c:
                held = _restore_conflict(c, new.contact_id, keys)
            if held is None:
                raise
            return held
        return Restoration.WRITTEN

    def collect(self, seen: Sequence[SeenPerson], at: datetime) -> int:
        return contact_collection.collect(self._engine, seen, at)

    def forget_withheld(self) -> int:
        with zeroing_transaction(self._engine) as c:
            changed = contact_withholding.forget_withheld(c, _release)
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
            holder = _holder(c, keys, own)
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


def _erase(c: sa.Connection, contact_id: uuid.UUID) -> Erasure:
    erased = c.execute(contact_addresses.delete().where(_A.contact_id == contact_id))
    gone = c.execute(contacts.delete().where(_C.contact_id == contact_id))
    return Erasure(was_held=gone.rowcount == 1, addresses_erased=erased.rowcount)


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
            _release(c, holder[0], key)
            kept.append(address)
        else:
            left += 1
    current = None if own is None else _read(c, own)
    if not kept:
        if own is not None:
            _erase(c, own)
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
                **_record_values(record),
            )
        )
        _insert_addresses(c, fresh, kept, ContactWriter.PEER)
        return 1, left
    if (
        current.display_name == record.display_name
        and current.preferred_address == preferred
        and sorted(current.addresses) == sorted(kept)
        and current.origin is ContactOrigin.ASSERTED
    ):
        return 0, left
    c.execute(contact_addresses.delete().where(_A.contact_id == current.contact_id))
    _insert_addresses(c, current.contact_id, kept, ContactWriter.PEER)
    c.execute(
        contacts.update()
        .where(_C.contact_id == current.contact_id)
        .values(origin=ContactOrigin.ASSERTED.value, amended_at=at, **_record_values(record))
    )
    return 1, left


def _release(c: sa.Connection, contact_id: uuid.UUID, key: str) -> None:
    """Take one address off a record; a record left with none is erased, and one whose
    preferred address went prefers the first remaining one."""
    c.execute(contact_addresses.delete().where(_A.address_key == key))
    remaining = sorted(
        c.execute(sa.select(_A.address).where(_A.contact_id == contact_id)).scalars(),
        key=address_key,
    )
    if not remaining:
        _erase(c, contact_id)
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


def _record_values(record: ContactRecord) -> dict[str, Any]:
    return {
        "display_name": record.display_name,
        "name_key": name_key(record.display_name),
        "preferred_address": record.preferred_address,
        "note": record.note,
    }


def _insert_contact(c: sa.Connection, new: NewContact, amended_at: datetime | None) -> None:
    c.execute(
        contacts.insert().values(
            contact_id=new.contact_id,
            origin=new.origin.value,
            peer_account_id=new.peer_account_id,
            recorded_at=new.recorded_at,
            amended_at=amended_at,
            **_record_values(new.record),
        )
    )
    _insert_addresses(c, new.contact_id, new.record.addresses, new.written_by)


def _insert_addresses(
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


def _writers_of(c: sa.Connection, contact_id: uuid.UUID) -> dict[str, str]:
    """Address key -> who wrote it, for the addresses a contact holds."""
    rows = c.execute(sa.select(_A.address_key, _A.written_by).where(_A.contact_id == contact_id))
    return {str(key): str(written_by) for key, written_by in rows}


def _restore_conflict(
    c: sa.Connection, contact_id: uuid.UUID, keys: list[str]
) -> Restoration | None:
    held = c.execute(sa.select(_C.contact_id).where(_C.contact_id == contact_id)).first()
    if held is not None:
        return Restoration.IDENTITY_HELD
    if _holder(c, keys, None) is not None:
        return Restoration.ADDRESS_HELD
    return None


def _holder(c: sa.Connection, keys: list[str], own: uuid.UUID | None) -> uuid.UUID | None:
    query = sa.select(_A.contact_id).where(_A.address_key.in_(keys))
    if own is not None:
        query = query.where(_A.contact_id != own)
    found: uuid.UUID | None = c.execute(query.order_by(_A.address_key).limit(1)).scalar()
    return found


def _addresses_of(c: sa.Connection, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    held: dict[uuid.UUID, list[str]] = {}
    if not ids:
        return held
    rows = c.execute(sa.select(_A.contact_id, _A.address).where(_A.contact_id.in_(ids)))
    for contact_id, address in rows:
        held.setdefault(contact_id, []).append(address)
    return held


def _read(c: sa.Connection, contact_id: uuid.UUID) -> Contact | None:
    row = c.execute(sa.select(contacts).where(_C.contact_id == contact_id)).mappings().first()
    if row is None:
        return None
    return _contact(row, _addresses_of(c, [contact_id]).get(contact_id, []))


def _contact(row: Any, held: list[str]) -> Contact:
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
