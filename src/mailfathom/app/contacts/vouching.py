"""The contact book as what vouches for a recipient under `UnvouchedRecipients = Refuse`.

Which records vouch is the operator's choice (`MailDelivery.VouchingContacts`): any record,
asserted ones only (somebody wrote the person down, peers included), or none. Whoever wrote an
address matters as much: what an MCP caller wrote into the book (a record it created, an
address it added to somebody's record) vouches for nothing unless the operator says so
(`MailDelivery.CallerWrittenContactsVouch`), or a caller could vouch for the very address it
wants to write to. A collected record a caller promoted vouches as a collected one: under
`Any` as before, under `Asserted` not until the operator takes it on or lets callers vouch.
"""

from __future__ import annotations

from mailfathom.app.contacts.ports import ContactBook
from mailfathom.domain.contacts import ContactOrigin, ContactWriter
from mailfathom.domain.delivery_config import VouchingContacts

_OWNED = frozenset({ContactWriter.OPERATOR, ContactWriter.PEER})


def vouching_records(
    which: VouchingContacts, callers_vouch: bool
) -> tuple[frozenset[ContactOrigin], frozenset[ContactWriter]]:
    """The origins of the records, and the writers of their addresses, that vouch."""
    if which is VouchingContacts.NONE:
        return frozenset(), frozenset()
    callers = frozenset({ContactWriter.CALLER}) if callers_vouch else frozenset()
    if which is VouchingContacts.ASSERTED:
        # A collected address on an asserted record is one a caller promoted.
        promoted = frozenset({ContactWriter.COLLECTION}) if callers_vouch else frozenset()
        return frozenset({ContactOrigin.ASSERTED}), _OWNED | callers | promoted
    return frozenset(ContactOrigin), _OWNED | {ContactWriter.COLLECTION} | callers


class BookVouching:
    def __init__(
        self, book: ContactBook, which: VouchingContacts, callers_vouch: bool = False
    ) -> None:
        self._book = book
        self._origins, self._writers = vouching_records(which, callers_vouch)

    def vouched_keys(self, keys: frozenset[str]) -> frozenset[str]:
        return self._book.held_keys(keys, self._origins, self._writers)
