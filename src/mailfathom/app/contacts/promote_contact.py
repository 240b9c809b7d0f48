"""promote_contact: take on a collected person, so the record becomes an asserted one.

One way only, and nothing about the person is rewritten. The answer is the state alone: the
caller named an identity, and the record is the reading grant's to serve. The operator's
promotion also takes the record on, so that it vouches for its addresses (see `vouching`).
"""

from __future__ import annotations

from mailfathom.app.contacts.ports import ContactBook, WriteState
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import ContactWriter, contact_identifier

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


class ContactPromotion:
    def __init__(self, book: ContactBook, writer: ContactWriter = ContactWriter.CALLER) -> None:
        self._book = book
        self._writer = writer

    def promote(self, caller: Caller, contact_id: object) -> WriteState:
        require(caller, PERMISSIONS)
        return self._book.promote(contact_identifier(contact_id), self._writer)
