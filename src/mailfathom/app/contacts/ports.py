"""Ports of the contact book.

The book is one per deployment. Every method is synchronous and runs its reads and writes in
one transaction; what two racing writers both claim is settled by the store's unique index on
an address's comparison form, never by a read made before the write.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.contacts.cards import Restoration
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import Contact, ContactOrigin, ContactRecord, ContactWriter


@dataclass(frozen=True, slots=True)
class NewContact:
    """A record to write where none is held. `peer_account_id` marks a record made for a
    local account of the deployment (a peer), so it can be taken out with that account.
    `writer` is who wrote it; None is the least a record of its origin can vouch as:
    collection for a collected record, an MCP caller for an asserted one."""

    contact_id: uuid.UUID
    record: ContactRecord
    origin: ContactOrigin
    recorded_at: datetime
    peer_account_id: str | None = None
    writer: ContactWriter | None = None

    @property
    def written_by(self) -> ContactWriter:
        if self.writer is not None:
            return self.writer
        if self.origin is ContactOrigin.COLLECTED:
            return ContactWriter.COLLECTION
        return ContactWriter.CALLER


class WriteState(enum.Enum):
    """What became of a create, an amendment or a promotion."""

    WRITTEN = "written"
    NOT_FOUND = "notFound"
    ADDRESS_HELD = "addressHeldByAnotherContact"
    WAS_COLLECTED = "contactWasCollected"
    ALREADY_ASSERTED = "alreadyAsserted"
    # A collected record holding no name, which an asserted record may not be: a promotion
    # leaves it collected, and the use case refuses the call (51011). Never published.
    UNNAMED = "unnamed"


@dataclass(frozen=True, slots=True)
class ContactWrite:
    """`contact` is the record as written (WRITTEN only); `holder_id` is one contact already
    holding an address the write claimed (ADDRESS_HELD only)."""

    state: WriteState
    contact: Contact | None = None
    holder_id: uuid.UUID | None = None


@dataclass(frozen=True, slots=True)
class Erasure:
    """What an erasure removed: whether the contact was held, and how many addresses went."""

    was_held: bool
    addresses_erased: int


@dataclass(frozen=True, slots=True)
class BookPosition:
    """Where a walk of the book stopped: the last contact's name key and identity."""

    name_key: str
    contact_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class PeerEntry:
    """A local account of the deployment as its peers' book holds it: its name and the
    addresses it receives at, `preferred` being the one mail to it is sent to."""

    account_id: str
    display_name: str
    addresses: tuple[str, ...]
    preferred: str


@dataclass(frozen=True, slots=True)
class PeerUpkeep:
    """What keeping the peers in step changed: records written or rewritten, records of
    accounts no longer configured erased, and addresses an owner's record already holds
    (left with that record)."""

    written: int
    erased: int
    left_with_owner: int


class ContactBook(Protocol):
    def create(self, new: NewContact) -> ContactWrite:
        """Write `new` unless one of its addresses (by comparison form) is held: WRITTEN with
        the record, or ADDRESS_HELD naming a holder. Of racing creates claiming one address,
        exactly one is written. Not idempotent: the identity is the caller's."""
        ...

    def find(self, contact_id: uuid.UUID) -> Contact | None:
        """The contact of that identity, or None."""
        ...

    def find_by_address(self, address: str) -> Contact | None:
        """The one contact holding `address` (compared by comparison form), or None."""
        ...

    def page(
        self,
        search: str | None,
        origin: ContactOrigin | None,
        after: BookPosition | None,
        limit: int,
    ) -> list[Contact]:
        """Up to `limit` contacts after `after`, ordered by name key then identity. `search`
        keeps contacts whose name or one of whose addresses contains it, without regard to
        case; wildcard characters in it match themselves."""
        ...

    def amend(
        self,
        contact_id: uuid.UUID,
        record: ContactRecord,
        at: datetime,
        writer: ContactWriter = ContactWriter.CALLER,
    ) -> ContactWrite:
        """Replace an asserted contact's whole record: WRITTEN, NOT_FOUND, WAS_COLLECTED, or
        ADDRESS_HELD when an address belongs to another contact. An address the record no
        longer names is removed; one it held already keeps its writer, and one it did not
        hold is `writer`'s. Idempotent."""
        ...

    def promote(
        self, contact_id: uuid.UUID, writer: ContactWriter = ContactWriter.CALLER
    ) -> WriteState:
        """Move a collected contact to asserted: WRITTEN, NOT_FOUND, ALREADY_ASSERTED, or
        UNNAMED for a collected record holding no name (left as it is, writers included,
        since an asserted record needs one). For a caller nothing else about the record
        changes. The operator takes the record on: every address a caller or collection wrote
        becomes the operator's, and a record where that changed something answers WRITTEN even
        when it was asserted. Idempotent."""
        ...

    def erase(self, contact_id: uuid.UUID) -> Erasure:
        """Delete the contact and every address recorded with it; nothing of it is kept.
        Idempotent: erasing an absent contact answers was_held False."""
        ...

    def held_keys(
        self,
        keys: Collection[str],
        origins: frozenset[ContactOrigin],
        writers: frozenset[ContactWriter] | None = None,
    ) -> frozenset[str]:
        """Which of these address comparison forms a contact of one of `origins` holds, as
        written by one of `writers` (None: by anybody)."""
        ...

    def keep_peers(self, peers: Sequence[PeerEntry], at: datetime) -> PeerUpkeep:
        """Make the book's peer records those of `peers`, in one transaction: each entry's
        record (asserted) carries its name and addresses (the note is the owner's and is
        kept); an address a collected record holds moves to the peer; one an asserted
        record of somebody else holds stays there; a peer record whose account is not in
        `peers` is erased."""
        ...

    def restore(self, new: NewContact, amended_at: datetime | None) -> Restoration:
        """Write `new` under its own identity, origin and times, as a record carried from
        elsewhere (an import): WRITTEN; IDENTITY_HELD when a contact of that identity is
        held; ADDRESS_HELD when one of its addresses is. Nothing held is changed, so
        restoring one record twice writes it once."""
        ...

    def collect(self, seen: Sequence[SeenPerson], at: datetime) -> int:
        """Record each address of `seen` nobody holds yet as a collected contact of its own,
        in one transaction, and answer how many records were written. An address a record
        of either origin holds adds nothing, except that a collected record without a name
        takes the name seen; an asserted record is never touched. Of racing collections of
        one address exactly one record is written."""
        ...
