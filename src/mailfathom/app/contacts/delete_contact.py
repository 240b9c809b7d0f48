"""delete_contact: erase one person and every address recorded with them.

An erasure, not a mark: the record and its addresses are deleted. Erasing somebody the book
does not hold is a completed erasure that says so (wasHeld false), never a failure.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from mailfathom.app.contacts.ports import ContactBook
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import contact_identifier

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


@dataclass(frozen=True, slots=True)
class ContactErased:
    contact_id: uuid.UUID
    was_held: bool
    addresses_erased: int


class ContactErasure:
    def __init__(self, book: ContactBook) -> None:
        self._book = book

    def delete(self, caller: Caller, contact_id: object) -> ContactErased:
        require(caller, PERMISSIONS)
        identity = contact_identifier(contact_id)
        erased = self._book.erase(identity)
        return ContactErased(identity, erased.was_held, erased.addresses_erased)
