"""export_contacts: the whole book as cards another address book reads.

The operator's export walks every page of the book in its one order and writes each person
once, whatever half of the book they are in; the format is the card adapter's.
"""

from __future__ import annotations

from dataclasses import dataclass

from mailfathom.app.contacts.cards import CardFormat
from mailfathom.app.contacts.ports import BookPosition, ContactBook
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import Contact, name_key

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_READ})

PAGE_SIZE = 200


@dataclass(frozen=True, slots=True)
class ExportedBook:
    data: bytes
    contacts: int


class ContactExport:
    def __init__(self, book: ContactBook, cards: CardFormat) -> None:
        self._book = book
        self._cards = cards

    def export(self, caller: Caller) -> ExportedBook:
        require(caller, PERMISSIONS)
        held: list[Contact] = []
        after: BookPosition | None = None
        while True:
            page = self._book.page(None, None, after, PAGE_SIZE)
            held.extend(page)
            if len(page) < PAGE_SIZE:
                break
            last = page[-1]
            after = BookPosition(name_key(last.display_name), last.contact_id)
        return ExportedBook(self._cards.write(held), len(held))
