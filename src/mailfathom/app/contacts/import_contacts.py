"""import_contacts: people another address book wrote down, each created as a contact.

Every card is held to create_contact's rules (a name of at most 256 characters, 1 to 32
addresses of at most 320 each, a note of at most 4000) and is written under the identity,
origin and times it carries, so an exported book comes back as it was. Nothing held is ever
changed: a card whose identity or one of whose addresses the book already holds is skipped,
which is also why importing one file twice adds nothing the second time. The summary is
counts only; which card was skipped would name a person.

A card that prefers no address prefers its first one: an address book that marks none leaves
the choice to whoever carries it over, and the operator's import is the one carrying it. An
asserted card is written as `writer`'s (the operator's, for `mfctl contact import`), a
collected one as collection's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.contacts.cards import Card, CardFormat, Restoration
from mailfathom.app.contacts.ports import ContactBook, NewContact
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import (
    ContactOrigin,
    ContactRecord,
    ContactWriter,
    address_key,
    contact_record,
)
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """How many cards were created, and how many were skipped for each reason."""

    imported: int = 0
    identity_held: int = 0
    address_held: int = 0
    out_of_bounds: int = 0
    malformed: int = 0

    @property
    def skipped(self) -> int:
        return self.identity_held + self.address_held + self.out_of_bounds + self.malformed


def _distinct(addresses: tuple[str, ...]) -> list[str]:
    """The card's addresses, each once by comparison form (another program may list one
    address under two types), spelt as first written."""
    spelt: dict[str, str] = {}
    for address in addresses:
        spelt.setdefault(address_key(address), address)
    return list(spelt.values())


def _record(card: Card) -> ContactRecord:
    addresses = _distinct(card.addresses)
    preferred = card.preferred_address or (addresses[0] if addresses else None)
    return contact_record(
        card.display_name,
        addresses,
        preferred,
        card.note or None,
        unnamed_allowed=card.origin is ContactOrigin.COLLECTED,
    )


def _identity(card: Card) -> uuid.UUID:
    if card.contact_id is None or card.contact_id.int == 0:
        return uuid.uuid4()
    return card.contact_id


class ContactImport:
    def __init__(
        self,
        book: ContactBook,
        cards: CardFormat,
        clock: Callable[[], datetime] = _now,
        writer: ContactWriter = ContactWriter.CALLER,
    ) -> None:
        self._book = book
        self._cards = cards
        self._clock = clock
        self._writer = writer

    def import_cards(self, caller: Caller, data: bytes) -> ImportSummary:
        require(caller, PERMISSIONS)
        reading = self._cards.read(data)
        counts = dict.fromkeys(Restoration, 0)
        out_of_bounds = 0
        for card in reading.cards:
            try:
                record = _record(card)
            except Refusal:
                out_of_bounds += 1
                continue
            writer = (
                ContactWriter.COLLECTION if card.origin is ContactOrigin.COLLECTED else self._writer
            )
            new = NewContact(
                _identity(card),
                record,
                card.origin,
                card.recorded_at or self._clock(),
                writer=writer,
            )
            counts[self._book.restore(new, card.amended_at)] += 1
        return ImportSummary(
            imported=counts[Restoration.WRITTEN],
            identity_held=counts[Restoration.IDENTITY_HELD],
            address_held=counts[Restoration.ADDRESS_HELD],
            out_of_bounds=out_of_bounds,
            malformed=reading.malformed,
        )
