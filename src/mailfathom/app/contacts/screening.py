"""The content screen applied to the records the contact tools answer with: a collected
record's name came from mail, and a note may quote it, so both are screened like mail text.
Addresses and identifiers pass as they are."""

from __future__ import annotations

import dataclasses

from mailfathom.app.contacts.ports import ContactWrite
from mailfathom.app.shared.content_screen import ContentScreen
from mailfathom.domain.contacts import Contact


def contact(screen: ContentScreen, value: Contact) -> Contact:
    if not screen.active:
        return value
    return dataclasses.replace(
        value,
        display_name=screen.text(value.display_name) or "",
        note=screen.text(value.note),
    )


def write(screen: ContentScreen, value: ContactWrite) -> ContactWrite:
    if value.contact is None or not screen.active:
        return value
    return dataclasses.replace(value, contact=contact(screen, value.contact))
