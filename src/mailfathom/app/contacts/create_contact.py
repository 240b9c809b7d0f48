"""create_contact: record a person the book does not hold yet, as asserted.

The book mints the identity, so the call is not idempotent: a second call with the same
person answers addressHeldByAnotherContact, naming the holder's identity and nothing else of
it (a caller holding only the writing grant learns no record by being refused). The record is
written as `writer`'s: an MCP caller's unless the operator writes it (see `vouching`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.contacts import screening
from mailfathom.app.contacts.ports import ContactBook, ContactWrite, NewContact
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import ContactOrigin, ContactWriter, contact_record

PERMISSIONS: Permissions = frozenset({Permission.CONTACTS_WRITE})


def _now() -> datetime:
    return datetime.now(UTC)


class ContactCreation:
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

    def create(
        self,
        caller: Caller,
        display_name: object,
        addresses: object,
        preferred_address: object,
        note: object = None,
    ) -> ContactWrite:
        require(caller, PERMISSIONS)
        record = contact_record(display_name, addresses, preferred_address, note)
        written = self._book.create(
            NewContact(
                uuid.uuid4(), record, ContactOrigin.ASSERTED, self._clock(), writer=self._writer
            )
        )
        return screening.write(self._screen, written)
