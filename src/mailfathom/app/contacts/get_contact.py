"""get_contact: one person, by the identity the book gave them or by any address they use.

Exactly one of the two is named (51010 for both or neither, for text that is no identifier,
and for an address that is not an address alone). Nobody held is an answer, not a failure.
"""

from __future__ import annotations

from mailfathom.app.contacts import screening
from mailfathom.app.contacts.ports import ContactBook
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import Contact, contact_identifier, lookup_address
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_READ})


class ContactLookup:
    def __init__(self, book: ContactBook, screen: ContentScreen = UNSCREENED) -> None:
        self._screen = screen
        self._book = book

    def get(self, caller: Caller, contact_id: object, address: object) -> Contact | None:
        require(caller, PERMISSIONS)
        if (contact_id is None) == (address is None):
            raise Refusal(
                Code.NOT_A_CONTACT_IDENTIFIER,
                "Name exactly one of contactId and address.",
            )
        if contact_id is not None:
            found = self._book.find(contact_identifier(contact_id))
        else:
            found = self._book.find_by_address(lookup_address(address))
        return None if found is None else screening.contact(self._screen, found)
