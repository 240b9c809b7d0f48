"""The book's vCard round trip as a check any test can run on the book it built: export the
whole book, erase every record, import the file, and find every person as they were."""

from __future__ import annotations

from datetime import datetime

from mailfathom.app.contacts.import_contacts import ImportSummary
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.contacts import Contact

OPERATOR = Caller(
    permissions=frozenset({Permission.CONTACTS_READ, Permission.CONTACTS_WRITE}),
    label="operator",
)

Kept = tuple[object, ...]


def whole_book(services: Services) -> list[Contact]:
    """Every contact, walked page by page the way a caller walks the book."""
    listing = services.contacts().listing
    held: list[Contact] = []
    cursor: str | None = None
    while True:
        page = listing.list(OPERATOR, page_size=200, cursor=cursor)
        held.extend(page.contacts)
        if page.next_cursor is None:
            return held
        cursor = page.next_cursor


def _second(when: datetime) -> datetime:
    return when.replace(microsecond=0)


def kept(contact: Contact) -> Kept:
    """What a round trip keeps: everything a person is, and the times to the second (a
    vCard timestamp carries no fraction). An amendment within the record's first second
    cannot be told from none."""
    recorded = _second(contact.recorded_at)
    amended = None if contact.amended_at is None else _second(contact.amended_at)
    return (
        contact.contact_id,
        contact.display_name,
        contact.addresses,
        contact.preferred_address,
        contact.note,
        contact.origin,
        recorded,
        amended if amended is not None and amended > recorded else None,
    )


def assert_round_trip(services: Services) -> bytes:
    """Export, erase, import, compare; answers the exported file."""
    before = whole_book(services)
    exchange = services.contact_exchange()
    exported = exchange.export.export(OPERATOR)
    assert exported.contacts == len(before)
    erasure = services.contacts().erasure
    for contact in before:
        assert erasure.delete(OPERATOR, str(contact.contact_id)).was_held
    assert whole_book(services) == []
    summary = exchange.importing.import_cards(OPERATOR, exported.data)
    assert summary == ImportSummary(imported=len(before)), summary
    after = whole_book(services)
    assert [kept(c) for c in after] == [kept(c) for c in before]
    return exported.data
