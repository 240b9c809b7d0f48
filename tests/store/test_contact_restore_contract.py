"""What an import relies on from the book, on SQLite, PostgreSQL and the in-memory fake
alike: a record carried from elsewhere keeps its identity, origin and times, and never
displaces what is held."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from mailfathom.app.contacts.cards import Restoration
from mailfathom.app.contacts.ports import ContactBook, NewContact
from mailfathom.domain.contacts import ContactOrigin, ContactRecord
from store.conftest import Backend

T0 = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest.fixture
def book(backend: Backend) -> ContactBook:
    return backend.contacts()


def _new(name: str, *addresses: str, origin: ContactOrigin = ContactOrigin.ASSERTED) -> NewContact:
    record = ContactRecord(name, tuple(addresses), addresses[-1], f"note of {name}")
    return NewContact(uuid.uuid4(), record, origin, T0)


def test_a_restored_record_keeps_its_identity_origin_and_times(book: ContactBook) -> None:
    new = _new(
        "Zoë Collected", "z@example.test", "Zed@Example.test", origin=ContactOrigin.COLLECTED
    )
    amended = T0 + timedelta(days=3)
    assert book.restore(new, amended) is Restoration.WRITTEN
    held = book.find(new.contact_id)
    assert held is not None
    assert held.contact_id == new.contact_id
    assert held.display_name == "Zoë Collected"
    assert held.addresses == ("Zed@Example.test", "z@example.test")
    assert held.preferred_address == "Zed@Example.test"
    assert held.note == "note of Zoë Collected"
    assert held.origin is ContactOrigin.COLLECTED
    assert held.recorded_at == T0
    assert held.amended_at == amended
    assert held.peer_account_id is None
    assert book.find_by_address("ZED@example.test") == held


def test_a_held_identity_or_address_is_answered_and_nothing_held_changes(
    book: ContactBook,
) -> None:
    first = _new("First", "first@example.test")
    assert book.restore(first, None) is Restoration.WRITTEN
    before = book.find(first.contact_id)

    again = NewContact(
        first.contact_id,
        ContactRecord("Other", ("other@example.test",), "other@example.test", None),
        ContactOrigin.COLLECTED,
        T0 + timedelta(days=1),
    )
    assert book.restore(again, None) is Restoration.IDENTITY_HELD
    assert book.restore(first, None) is Restoration.IDENTITY_HELD
    assert book.find_by_address("other@example.test") is None

    claiming = _new("Claimer", "claimer@example.test", "FIRST@example.test")
    assert book.restore(claiming, None) is Restoration.ADDRESS_HELD
    assert book.find(claiming.contact_id) is None
    assert book.find_by_address("claimer@example.test") is None
    assert book.find(first.contact_id) == before


def test_an_address_a_created_contact_holds_stops_a_restore(book: ContactBook) -> None:
    created = _new("Created", "held@example.test")
    assert book.create(created).contact is not None
    carried = _new("Carried", "Held@Example.test")
    assert book.restore(carried, None) is Restoration.ADDRESS_HELD
    assert book.find(carried.contact_id) is None
