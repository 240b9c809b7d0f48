"""The contact book as what vouches for a recipient under `UnvouchedRecipients = Refuse`.

Which records vouch is the operator's choice (`MailDelivery.VouchingContacts`): any record,
asserted ones only (somebody wrote the person down, peers included), or none.
"""

from __future__ import annotations

from mailfathom.app.contacts.ports import ContactBook
from mailfathom.domain.contacts import ContactOrigin
from mailfathom.domain.delivery_config import VouchingContacts

_ORIGINS = {
    VouchingContacts.ANY: frozenset(ContactOrigin),
    VouchingContacts.ASSERTED: frozenset({ContactOrigin.ASSERTED}),
    VouchingContacts.NONE: frozenset[ContactOrigin](),
}


class BookVouching:
    def __init__(self, book: ContactBook, which: VouchingContacts) -> None:
        self._book = book
        self._origins = _ORIGINS[which]

    def vouched_keys(self, keys: frozenset[str]) -> frozenset[str]:
        return self._book.held_keys(keys, self._origins)
