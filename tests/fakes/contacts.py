"""The contact book in memory: `ContactBook`, one holder per address by a dict's key, and
who wrote each address kept with it, as the SQL book keeps it on the address row."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from fakes.outbox import utc
from mailfathom.app.contacts.cards import Restoration
from mailfathom.app.contacts.ports import (
    BookPosition,
    ContactBook,
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


@dataclasses.dataclass
class _Person:
    """A record without its addresses, which the book keeps by key."""

    contact_id: uuid.UUID
    display_name: str
    preferred_address: str
    note: str | None
    origin: ContactOrigin
    recorded_at: datetime
    amended_at: datetime | None
    peer_account_id: str | None


class _Held(NamedTuple):
    """One address of the book: its holder, the address as written, and who wrote it."""

    holder: uuid.UUID
    address: str
    writer: ContactWriter


# What the operator's promotion takes on: addresses nobody of the deployment vouched for yet.
_TAKEN_ON = frozenset({ContactWriter.CALLER, ContactWriter.COLLECTION})


class InMemoryContactBook:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._people: dict[uuid.UUID, _Person] = {}
        # Address comparison form -> the address held under it.
        self._addresses: dict[str, _Held] = {}

    def row_counts(self) -> tuple[int, int]:
        """(records, address rows) as the SQL stores count their two tables."""
        with self._lock:
            return len(self._people), len(self._addresses)

    # -- reading -------------------------------------------------------------------------

    def _contact(self, person: _Person) -> Contact:
        held = [h.address for h in self._addresses.values() if h.holder == person.contact_id]
        return Contact(
            contact_id=person.contact_id,
            display_name=person.display_name,
            addresses=ordered_addresses(person.preferred_address, held),
            preferred_address=person.preferred_address,
            note=person.note,
            origin=person.origin,
            recorded_at=person.recorded_at,
            amended_at=person.amended_at,
            peer_account_id=person.peer_account_id,
        )

    def find(self, contact_id: uuid.UUID) -> Contact | None:
        with self._lock:
            person = self._people.get(contact_id)
            return None if person is None else self._contact(person)

    def find_by_address(self, address: str) -> Contact | None:
        with self._lock:
            held = self._addresses.get(address_key(address))
            return None if held is None else self._contact(self._people[held.holder])

    def page(
        self,
        search: str | None,
        origin: ContactOrigin | None,
        after: BookPosition | None,
        limit: int,
    ) -> list[Contact]:
        def order(name: str, contact_id: uuid.UUID) -> tuple[bytes, str]:
            return name_key(name).encode(), contact_id.hex

        with self._lock:
            people = sorted(
                self._people.values(), key=lambda p: order(p.display_name, p.contact_id)
            )
            found: list[Contact] = []
            for person in people:
                if len(found) == limit:
                    break
                if origin is not None and person.origin is not origin:
                    continue
                mark = (after.name_key.encode(), after.contact_id.hex) if after else None
                if mark is not None and order(person.display_name, person.contact_id) <= mark:
                    continue
                contact = self._contact(person)
                if search and not _matches(contact, search):
                    continue
                found.append(contact)
            return found

    def held_keys(
        self,
        keys: Collection[str],
        origins: frozenset[ContactOrigin],
        writers: frozenset[ContactWriter] | None = None,
    ) -> frozenset[str]:
        with self._lock:
            return frozenset(
                key
                for key in set(keys)
                if (held := self._addresses.get(key)) is not None
                and self._people[held.holder].origin in origins
                and (writers is None or held.writer in writers)
            )

    # -- writing -------------------------------------------------------------------------

    def create(self, new: NewContact) -> ContactWrite:
        with self._lock:
            holder = self._holder(new.record.addresses, None)
            if holder is not None:
                return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
            person = self._insert(new, None)
            return ContactWrite(WriteState.WRITTEN, contact=self._contact(person))

    def _holder(self, addresses: Iterable[str], own: uuid.UUID | None) -> uuid.UUID | None:
        holders = sorted(
            (key, self._addresses[key].holder)
            for key in {address_key(a) for a in addresses}
            if key in self._addresses and self._addresses[key].holder != own
        )
        return holders[0][1] if holders else None

    def _insert(self, new: NewContact, amended_at: datetime | None) -> _Person:
        person = _Person(
            contact_id=new.contact_id,
            display_name=new.record.display_name,
            preferred_address=new.record.preferred_address,
            note=new.record.note,
            origin=new.origin,
            recorded_at=utc(new.recorded_at),
            amended_at=None if amended_at is None else utc(amended_at),
            peer_account_id=new.peer_account_id,
        )
        self._people[new.contact_id] = person
        self._hold(new.contact_id, new.record.addresses, new.written_by)
        return person

    def _hold(
        self,
        contact_id: uuid.UUID,
        addresses: Iterable[str],
        writer: ContactWriter,
        kept: Mapping[str, ContactWriter] | None = None,
    ) -> None:
        """An address `kept` names (by key) keeps the writer it names; every other one is
        `writer`'s."""
        earlier = kept or {}
        for address in addresses:
            key = address_key(address)
            self._addresses[key] = _Held(contact_id, address, earlier.get(key, writer))

    def _release_all(self, contact_id: uuid.UUID) -> dict[str, ContactWriter]:
        """Take every address off a record; answers who wrote each, by key."""
        released = {k: h.writer for k, h in self._addresses.items() if h.holder == contact_id}
        for key in released:
            del self._addresses[key]
        return released

    def amend(
        self,
        contact_id: uuid.UUID,
        record: ContactRecord,
        at: datetime,
        writer: ContactWriter = ContactWriter.CALLER,
    ) -> ContactWrite:
        with self._lock:
            person = self._people.get(contact_id)
            if person is None:
                return ContactWrite(WriteState.NOT_FOUND)
            if person.origin is not ContactOrigin.ASSERTED:
                return ContactWrite(WriteState.WAS_COLLECTED)
            holder = self._holder(record.addresses, contact_id)
            if holder is not None:
                return ContactWrite(WriteState.ADDRESS_HELD, holder_id=holder)
            writers = self._release_all(contact_id)
            self._hold(contact_id, record.addresses, writer, writers)
            _take_record(person, record)
            person.amended_at = utc(at)
            return ContactWrite(WriteState.WRITTEN, contact=self._contact(person))

    def promote(
        self, contact_id: uuid.UUID, writer: ContactWriter = ContactWriter.CALLER
    ) -> WriteState:
        with self._lock:
            person = self._people.get(contact_id)
            if person is None:
                return WriteState.NOT_FOUND
            changed = person.origin is not ContactOrigin.ASSERTED
            if changed and not person.display_name:
                return WriteState.UNNAMED
            person.origin = ContactOrigin.ASSERTED
            if writer is ContactWriter.OPERATOR:
                for key, held in list(self._addresses.items()):
                    if held.holder == contact_id and held.writer in _TAKEN_ON:
                        self._addresses[key] = held._replace(writer=ContactWriter.OPERATOR)
                        changed = True
            return WriteState.WRITTEN if changed else WriteState.ALREADY_ASSERTED

    def erase(self, contact_id: uuid.UUID) -> Erasure:
        with self._lock:
            return self._erase(contact_id)

    def _erase(self, contact_id: uuid.UUID) -> Erasure:
        erased = len(self._release_all(contact_id))
        return Erasure(self._people.pop(contact_id, None) is not None, erased)

    def restore(self, new: NewContact, amended_at: datetime | None) -> Restoration:
        with self._lock:
            if new.contact_id in self._people:
                return Restoration.IDENTITY_HELD
            if self._holder(new.record.addresses, None) is not None:
                return Restoration.ADDRESS_HELD
            self._insert(new, amended_at)
            return Restoration.WRITTEN

    def collect(self, seen: Sequence[SeenPerson], at: datetime) -> int:
        people: dict[str, SeenPerson] = {}
        for person in seen:
            held = people.get(person.key)
            if held is None or (not held.display_name and person.display_name):
                people[person.key] = SeenPerson(
                    held.address if held else person.address, person.display_name
                )
        written = 0
        with self._lock:
            for key, person in sorted(people.items()):
                holder = self._addresses.get(key)
                if holder is None:
                    record = ContactRecord(
                        person.display_name, (person.address,), person.address, None
                    )
                    self._insert(
                        NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, at), None
                    )
                    written += 1
                    continue
                kept = self._people[holder.holder]
                if kept.origin is ContactOrigin.COLLECTED and not kept.display_name:
                    kept.display_name = person.display_name
        return written

    # -- peers ---------------------------------------------------------------------------

    def keep_peers(self, peers: Sequence[PeerEntry], at: datetime) -> PeerUpkeep:
        wanted = {p.account_id for p in peers}
        erased = written = left = 0
        with self._lock:
            held = {
                p.peer_account_id: p.contact_id
                for p in self._people.values()
                if p.peer_account_id is not None
            }
            for account_id, contact_id in held.items():
                if account_id not in wanted:
                    self._erase(contact_id)
                    erased += 1
            for peer in peers:
                wrote, kept_by_owner = self._keep_peer(peer, held.get(peer.account_id), at)
                written += wrote
                left += kept_by_owner
        return PeerUpkeep(written=written, erased=erased, left_with_owner=left)

    def _keep_peer(self, peer: PeerEntry, own: uuid.UUID | None, at: datetime) -> tuple[int, int]:
        kept: list[str] = []
        left = 0
        for key, address in {address_key(a): a for a in peer.addresses}.items():
            holder = self._addresses.get(key)
            if holder is None or holder.holder == own:
                kept.append(address)
            elif self._people[holder.holder].origin is ContactOrigin.COLLECTED:
                self._release(holder.holder, key)
                kept.append(address)
            else:
                left += 1
        current = None if own is None else self._people.get(own)
        if not kept:
            if own is not None:
                self._erase(own)
            return 0, left
        preferred = next(
            (a for a in kept if address_key(a) == address_key(peer.preferred)), kept[0]
        )
        record = ContactRecord(
            peer.display_name[:256], tuple(kept), preferred, current.note if current else None
        )
        if current is None:
            new = NewContact(
                uuid.uuid4(),
                record,
                ContactOrigin.ASSERTED,
                at,
                peer.account_id,
                writer=ContactWriter.PEER,
            )
            self._insert(new, None)
            return 1, left
        now_held = self._contact(current)
        if (
            current.display_name == record.display_name
            and current.preferred_address == preferred
            and sorted(now_held.addresses) == sorted(kept)
            and current.origin is ContactOrigin.ASSERTED
        ):
            return 0, left
        self._release_all(current.contact_id)
        self._hold(current.contact_id, kept, ContactWriter.PEER)
        _take_record(current, record)
        current.origin = ContactOrigin.ASSERTED
        current.amended_at = utc(at)
        return 1, left

    def _release(self, contact_id: uuid.UUID, key: str) -> None:
        """Take one address off a record; one left with none is erased, and one whose
        preferred address went prefers the first remaining one."""
        del self._addresses[key]
        remaining = sorted(
            (h.address for h in self._addresses.values() if h.holder == contact_id),
            key=address_key,
        )
        if not remaining:
            self._erase(contact_id)
            return
        person = self._people[contact_id]
        if address_key(person.preferred_address) == key:
            person.preferred_address = remaining[0]


def _take_record(person: _Person, record: ContactRecord) -> None:
    person.display_name = record.display_name
    person.preferred_address = record.preferred_address
    person.note = record.note


def _matches(contact: Contact, search: str) -> bool:
    """The book's search: the name, or one of the addresses, contains the text as written
    (no character in it is a wildcard), without regard to case."""
    return name_key(search) in name_key(contact.display_name) or any(
        address_key(search) in address_key(a) for a in contact.addresses
    )


_: ContactBook = InMemoryContactBook()
