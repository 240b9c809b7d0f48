"""Who wrote each address of the contact book, on SQLite, PostgreSQL and the in-memory fake
alike, and which addresses therefore vouch for a recipient: a caller's writes vouch for
nothing unless the operator says so, an amendment keeps who wrote the addresses it keeps, the
operator's promotion takes a record on, a restored record and a peer's vouch as their writers
do, and (on the SQL stores) the migration gives every address held a writer."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.contacts.cards import Restoration
from mailfathom.app.contacts.ports import ContactBook, NewContact, PeerEntry, WriteState
from mailfathom.app.contacts.vouching import BookVouching
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactRecord, ContactWriter
from mailfathom.domain.delivery_config import VouchingContacts
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CALLER = "caller@example.test"
OPERATOR = "operator@example.test"
COLLECTED = "collected@example.test"
PROMOTED = "promoted@example.test"
PEER = "peer@example.test"
EVERYONE = frozenset({CALLER, OPERATOR, COLLECTED, PROMOTED, PEER})


@pytest.fixture
def book(backend: Backend) -> ContactBook:
    return backend.contacts()


def _write(
    book: ContactBook,
    address: str,
    origin: ContactOrigin = ContactOrigin.ASSERTED,
    writer: ContactWriter | None = None,
) -> uuid.UUID:
    record = ContactRecord("Somebody", (address,), address, None)
    written = book.create(NewContact(uuid.uuid4(), record, origin, T0, writer=writer))
    assert written.contact is not None
    return written.contact.contact_id


def _whole_book(book: ContactBook) -> None:
    _write(book, CALLER, writer=ContactWriter.CALLER)
    _write(book, OPERATOR, writer=ContactWriter.OPERATOR)
    _write(book, COLLECTED, ContactOrigin.COLLECTED)
    promoted = _write(book, PROMOTED, ContactOrigin.COLLECTED)
    assert book.promote(promoted, ContactWriter.CALLER) is WriteState.WRITTEN
    book.keep_peers([PeerEntry("colleague", "Colleague", (PEER,), PEER)], T0)


@pytest.mark.parametrize(
    ("which", "callers_vouch", "vouched"),
    [
        (VouchingContacts.ANY, False, {OPERATOR, COLLECTED, PROMOTED, PEER}),
        (VouchingContacts.ANY, True, EVERYONE),
        (VouchingContacts.ASSERTED, False, {OPERATOR, PEER}),
        (VouchingContacts.ASSERTED, True, {CALLER, OPERATOR, PROMOTED, PEER}),
        (VouchingContacts.NONE, False, set()),
        (VouchingContacts.NONE, True, set()),
    ],
)
def test_what_vouches_depends_on_who_wrote_each_address(
    book: ContactBook, which: VouchingContacts, callers_vouch: bool, vouched: set[str]
) -> None:
    _whole_book(book)
    assert BookVouching(book, which, callers_vouch).vouched_keys(EVERYONE) == vouched


def test_a_record_written_without_a_writer_vouches_as_little_as_its_origin_allows(
    book: ContactBook,
) -> None:
    _write(book, CALLER)
    _write(book, COLLECTED, ContactOrigin.COLLECTED)
    vouching = BookVouching(book, VouchingContacts.ANY)
    assert vouching.vouched_keys(frozenset({CALLER, COLLECTED})) == {COLLECTED}


def test_an_amendment_keeps_who_wrote_the_addresses_it_keeps(book: ContactBook) -> None:
    owned = _write(book, OPERATOR, writer=ContactWriter.OPERATOR)
    vouching = BookVouching(book, VouchingContacts.ASSERTED)
    added = ContactRecord("Somebody", (OPERATOR, CALLER), CALLER, None)
    assert book.amend(owned, added, T0, ContactWriter.CALLER).state is WriteState.WRITTEN
    assert vouching.vouched_keys(frozenset({OPERATOR, CALLER})) == {OPERATOR}
    # Restated by the operator, an address a caller added stays the caller's.
    noted = ContactRecord("Somebody", (OPERATOR, CALLER), OPERATOR, "a note")
    assert book.amend(owned, noted, T0, ContactWriter.OPERATOR).state is WriteState.WRITTEN
    assert vouching.vouched_keys(frozenset({OPERATOR, CALLER})) == {OPERATOR}
    # Taken out and put back by a caller, the operator's address is the caller's.
    alone = ContactRecord("Somebody", (CALLER,), CALLER, None)
    book.amend(owned, alone, T0, ContactWriter.CALLER)
    book.amend(owned, added, T0, ContactWriter.CALLER)
    assert vouching.vouched_keys(frozenset({OPERATOR, CALLER})) == frozenset()


def test_the_operators_promotion_takes_a_record_on_and_a_callers_does_not(
    book: ContactBook,
) -> None:
    vouching = BookVouching(book, VouchingContacts.ASSERTED)
    written = _write(book, CALLER, writer=ContactWriter.CALLER)
    assert book.promote(written, ContactWriter.CALLER) is WriteState.ALREADY_ASSERTED
    assert vouching.vouched_keys(frozenset({CALLER})) == frozenset()
    assert book.promote(written, ContactWriter.OPERATOR) is WriteState.WRITTEN
    assert vouching.vouched_keys(frozenset({CALLER})) == {CALLER}
    assert book.promote(written, ContactWriter.OPERATOR) is WriteState.ALREADY_ASSERTED
    collected = _write(book, COLLECTED, ContactOrigin.COLLECTED)
    assert book.promote(collected, ContactWriter.OPERATOR) is WriteState.WRITTEN
    assert vouching.vouched_keys(frozenset({COLLECTED})) == {COLLECTED}
    assert book.promote(uuid.uuid4(), ContactWriter.OPERATOR) is WriteState.NOT_FOUND


def test_collection_writes_its_addresses_as_collection(book: ContactBook) -> None:
    assert book.collect([SeenPerson(COLLECTED, "Seen")], T0) == 1
    vouching = BookVouching(book, VouchingContacts.ANY)
    assert vouching.vouched_keys(frozenset({COLLECTED})) == {COLLECTED}
    assert BookVouching(book, VouchingContacts.ASSERTED).vouched_keys(frozenset({COLLECTED})) == (
        frozenset()
    )


def test_a_restored_record_vouches_as_whoever_restored_it(book: ContactBook) -> None:
    vouching = BookVouching(book, VouchingContacts.ASSERTED)
    for address, writer in ((OPERATOR, ContactWriter.OPERATOR), (CALLER, None)):
        record = ContactRecord("Somebody", (address,), address, None)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, T0, writer=writer)
        assert book.restore(new, T0) is Restoration.WRITTEN
    assert vouching.vouched_keys(frozenset({OPERATOR, CALLER})) == {OPERATOR}


def test_a_peer_taking_a_collected_address_vouches_for_it_as_the_peers(
    book: ContactBook,
) -> None:
    _write(book, PEER, ContactOrigin.COLLECTED)
    vouching = BookVouching(book, VouchingContacts.ASSERTED)
    assert vouching.vouched_keys(frozenset({PEER})) == frozenset()
    entry = PeerEntry("colleague", "Colleague", (PEER,), PEER)
    book.keep_peers([entry], T0)
    assert vouching.vouched_keys(frozenset({PEER})) == {PEER}
    # Renamed, the peer's record is written again and still the peer's.
    book.keep_peers([PeerEntry("colleague", "Colleague Two", (PEER,), PEER)], T0)
    assert vouching.vouched_keys(frozenset({PEER})) == {PEER}
    assert BookVouching(book, VouchingContacts.NONE).vouched_keys(frozenset({PEER})) == (
        frozenset()
    )


def _insert_0014(c: sa.Connection, address: str, origin: str, peer: str | None) -> None:
    contact_id = uuid.uuid4()
    contacts = sa.table(
        "contacts",
        sa.column("contact_id", sa.Uuid),
        sa.column("display_name"),
        sa.column("name_key"),
        sa.column("preferred_address"),
        sa.column("origin"),
        sa.column("peer_account_id"),
        sa.column("recorded_at", sa.DateTime(timezone=True)),
    )
    addresses = sa.table(
        "contact_addresses",
        sa.column("address_key"),
        sa.column("contact_id", sa.Uuid),
        sa.column("address"),
    )
    c.execute(
        contacts.insert().values(
            contact_id=contact_id,
            display_name="Somebody",
            name_key="somebody",
            preferred_address=address,
            origin=origin,
            peer_account_id=peer,
            recorded_at=T0,
        )
    )
    c.execute(
        addresses.insert().values(address_key=address, contact_id=contact_id, address=address)
    )


def test_the_migration_gives_every_address_held_a_writer_and_takes_it_away(
    engine: sa.Engine,
) -> None:
    migrate.downgrade(engine, "0014_send_after")
    assert "written_by" not in {
        c["name"] for c in sa.inspect(engine).get_columns("contact_addresses")
    }
    with engine.begin() as c:
        _insert_0014(c, CALLER, "asserted", None)
        _insert_0014(c, COLLECTED, "collected", None)
        _insert_0014(c, PEER, "asserted", "colleague")
    migrate.upgrade(engine)
    with engine.connect() as c:
        found = c.execute(sa.text("SELECT address_key, written_by FROM contact_addresses"))
        rows = {str(key): str(writer) for key, writer in found}
    assert rows == {CALLER: "caller", COLLECTED: "collection", PEER: "peer"}
    assert BookVouching(SqlContactBook(engine), VouchingContacts.ANY).vouched_keys(
        frozenset(rows)
    ) == {COLLECTED, PEER}
    migrate.downgrade(engine, "0014_send_after")
    assert "written_by" not in {
        c["name"] for c in sa.inspect(engine).get_columns("contact_addresses")
    }
    migrate.upgrade(engine)
