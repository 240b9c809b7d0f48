"""Ports of carrying the book to and from other address books, as cards.

A card is what another program wrote about a person, before any rule of the book is applied:
the use cases hold it to the same bounds create_contact does. The card format itself (vCard)
is an adapter's, so nothing here knows how a card is spelt.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.domain.contacts import Contact, ContactOrigin


@dataclass(frozen=True, slots=True)
class Card:
    """One person as a card carries them. `contact_id` is the identity the card names, when
    it names one this book can keep; `preferred_address` is the address the card marks
    preferred, or None when it marks none."""

    contact_id: uuid.UUID | None
    display_name: str | None
    addresses: tuple[str, ...]
    preferred_address: str | None
    note: str | None
    origin: ContactOrigin
    recorded_at: datetime | None
    amended_at: datetime | None


@dataclass(frozen=True, slots=True)
class CardReading:
    """The cards read from one file, and how many of its cards could not be read at all."""

    cards: tuple[Card, ...]
    malformed: int


class Restoration(enum.Enum):
    """What became of writing a record under the identity and times it was carried with."""

    WRITTEN = "written"
    IDENTITY_HELD = "identityHeld"
    ADDRESS_HELD = "addressHeldByAnotherContact"


class CardFormat(Protocol):
    def write(self, contacts: Sequence[Contact]) -> bytes:
        """Every contact as one card each, in one file."""
        ...

    def read(self, data: bytes) -> CardReading:
        """Every card of a file; a card that cannot be read is counted, never raised."""
        ...
