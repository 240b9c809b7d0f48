"""The console's contact book: its pages, each person's origin (who wrote their addresses:
collection from mail, an agent, the owner, or the deployment for a local account), and the
owner's two decisions, promote and erase.

Each runs the use case `mfctl contact` runs, as the book's owner: a promotion takes the
record on, so its addresses are vouched for; an erasure deletes the record and every address
recorded with it (the `delete_contact` tool's erasure)."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from mailfathom.app.contacts.delete_contact import ContactErased, ContactErasure
from mailfathom.app.contacts.get_contact import ContactLookup
from mailfathom.app.contacts.list_contacts import ContactListing
from mailfathom.app.contacts.ports import WriteState
from mailfathom.app.contacts.promote_contact import ContactPromotion
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import Contact, ContactOrigin, ContactWriter
from mailfathom.domain.errors import Refusal

OWNER = Caller(
    permissions=frozenset({Permission.CONTACTS_READ, Permission.CONTACTS_WRITE}),
    label="console",
)
PAGE_SIZE = 50
"""How many people one page of the book shows."""


class ContactWriters(Protocol):
    def writers(
        self, contact_ids: Collection[uuid.UUID]
    ) -> dict[uuid.UUID, frozenset[ContactWriter]]:
        """Who wrote the addresses of each of these contacts."""
        ...


@dataclass(frozen=True, slots=True)
class BookEntry:
    contact: Contact
    # Who wrote its addresses, in the order `ContactWriter` names them.
    writers: tuple[ContactWriter, ...]

    @property
    def promotable(self) -> bool:
        """A promotion would change something: the record is collected, or an address is
        not yet the owner's (a local account's record is the deployment's own)."""
        if self.contact.peer_account_id is not None:
            return False
        if self.contact.origin is ContactOrigin.COLLECTED:
            return True
        return any(w in (ContactWriter.CALLER, ContactWriter.COLLECTION) for w in self.writers)


@dataclass(frozen=True, slots=True)
class BookPage:
    entries: tuple[BookEntry, ...]
    next_cursor: str | None


class Promoted(enum.Enum):
    NOW = "promoted"
    ALREADY = "already-asserted"
    NOT_FOUND = "not-found"
    # A collected record without a name: an asserted one needs a name (51011).
    UNNAMED = "unnamed"


class ConsoleContacts:
    def __init__(
        self,
        listing: ContactListing,
        lookup: ContactLookup,
        promotion: ContactPromotion,
        erasure: ContactErasure,
        writers: ContactWriters,
    ) -> None:
        self._listing = listing
        self._lookup = lookup
        self._promotion = promotion
        self._erasure = erasure
        self._writers = writers

    def page(self, cursor: str | None = None) -> BookPage:
        """One page of the book in its order (by name); a cursor not issued here is
        refused (52003) by the listing."""
        found = self._listing.list(OWNER, page_size=PAGE_SIZE, cursor=cursor)
        return BookPage(self._entries(found.contacts), found.next_cursor)

    def find(self, contact_id: str) -> BookEntry | None:
        identity = _identity(contact_id)
        if identity is None:
            return None
        found = self._lookup.get(OWNER, str(identity), None)
        return None if found is None else self._entries((found,))[0]

    def promote(self, contact_id: str) -> Promoted:
        """`mfctl contact promote`: a collected record becomes asserted, and every address
        of the record is vouched for by the owner."""
        identity = _identity(contact_id)
        if identity is None:
            return Promoted.NOT_FOUND
        try:
            state = self._promotion.promote(OWNER, str(identity))
        except Refusal as refusal:
            if refusal.code == Code.CONTACT_RULE_BROKEN:
                return Promoted.UNNAMED
            raise
        if state is WriteState.NOT_FOUND:
            return Promoted.NOT_FOUND
        return Promoted.ALREADY if state is WriteState.ALREADY_ASSERTED else Promoted.NOW

    def erase(self, contact_id: str) -> ContactErased | None:
        """`mfctl contact delete`: the record and every address recorded with it; None when
        the text names no contact."""
        identity = _identity(contact_id)
        if identity is None:
            return None
        return self._erasure.delete(OWNER, str(identity))

    def _entries(self, contacts: tuple[Contact, ...]) -> tuple[BookEntry, ...]:
        written = self._writers.writers([c.contact_id for c in contacts])
        order = list(ContactWriter)
        return tuple(
            BookEntry(c, tuple(sorted(written.get(c.contact_id, ()), key=order.index)))
            for c in contacts
        )


def _identity(text: str) -> uuid.UUID | None:
    try:
        identity = uuid.UUID(text)
    except ValueError:
        return None
    return identity if identity.int else None
