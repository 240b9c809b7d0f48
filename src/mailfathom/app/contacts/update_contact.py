"""update_contact: amend one asserted contact to the whole record the caller states.

An address the record does not name is removed and an omitted note clears the one held. A
collected record answers contactWasCollected until it is promoted. An address the record held
keeps whoever wrote it; one it did not is `writer`'s, so a caller adding an address to the
operator's record does not make the operator vouch for it (see `vouching`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.contacts import screening
from mailfathom.app.contacts.ports import ContactBook, ContactWrite
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import ContactWriter, contact_identifier, contact_record

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


def _now() -> datetime:
    return datetime.now(UTC)


class ContactAmendment:
    def __init__(
        self,
        book: ContactBook,
        clock: Callable[[], datetime] = _now,
        writer: ContactWriter = ContactWriter.CALLER,
        screen: ContentScreen = UNSCREENED,
    ) -> None:
        self._screen = screen
        self._book = book
        self._clock = clock
        self._writer = writer

    def update(
        self,
        caller: Caller,
        contact_id: object,
        display_name: object,
        addresses: object,
        preferred_address: object,
        note: object = None,
    ) -> ContactWrite:
        require(caller, PERMISSIONS)
        identity = contact_identifier(contact_id)
        record = contact_record(display_name, addresses, preferred_address, note)
        written = self._book.amend(identity, record, self._clock(), self._writer)
        return screening.write(self._screen, written)
