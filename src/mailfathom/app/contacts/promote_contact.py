"""promote_contact: take on a collected person, so the record becomes an asserted one.

One way only, and nothing about the person is rewritten. The answer is the state alone: the
caller named an identity, and the record is the reading grant's to serve. The operator's
promotion also takes the record on, so that it vouches for its addresses (see `vouching`).
An asserted record needs a name, so a collected one whose mail named nobody is refused
(51011) rather than becoming a record the book's own rules, and its vCard import, would turn
down; the refused record stays as it was, its writers included.
"""

from __future__ import annotations

from mailfathom.app.contacts.ports import ContactBook, WriteState
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import UNNAMED_PROMOTION, ContactWriter, contact_identifier
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


class ContactPromotion:
    def __init__(self, book: ContactBook, writer: ContactWriter = ContactWriter.CALLER) -> None:
        self._book = book
        self._writer = writer

    def promote(self, caller: Caller, contact_id: object) -> WriteState:
        require(caller, PERMISSIONS)
        state = self._book.promote(contact_identifier(contact_id), self._writer)
        if state is WriteState.UNNAMED:
            raise Refusal(Code.CONTACT_RULE_BROKEN, UNNAMED_PROMOTION)
        return state
