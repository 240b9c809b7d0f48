"""promote_contact: take on a collected person, so the record becomes an asserted one.

One way only, and nothing about the person is rewritten. The answer is the state alone: the
caller named an identity, and the record is the reading grant's to serve. An asserted record
needs a name, so a collected one whose mail named nobody is refused (51011) rather than
becoming a record the book's own rules, and its vCard import, would turn down.
"""

from __future__ import annotations

from mailfathom.app.contacts.ports import ContactBook, WriteState
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import UNNAMED_PROMOTION, contact_identifier
from mailfathom.domain.errors import Refusal

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


class ContactPromotion:
    def __init__(self, book: ContactBook) -> None:
        self._book = book

    def promote(self, caller: Caller, contact_id: object) -> WriteState:
        require(caller, PERMISSIONS)
        state = self._book.promote(contact_identifier(contact_id))
        if state is WriteState.UNNAMED:
            raise Refusal(Code.CONTACT_RULE_BROKEN, UNNAMED_PROMOTION)
        return state
