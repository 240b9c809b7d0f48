"""What synchronization relies on from the book's collection, on SQLite, PostgreSQL and the
in-memory fake alike: one collected record per address nobody held, nothing twice, an
asserted record never touched, an empty name filled once, and racing collections leaving one
record per address."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

from mailfathom.app.contacts.ports import NewContact, WriteState
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactRecord
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(hours=1)


def test_each_new_address_becomes_one_collected_record_of_its_own(backend: Backend) -> None:
    book = backend.contacts()
    seen = [
        SeenPerson("Ann.Smith@Example.org", "Ann Smith"),
        SeenPerson("bob@example.org", ""),
        SeenPerson("ann.smith@example.ORG", "Another Ann"),
    ]
    assert book.collect(seen, T0) == 2
    ann = book.find_by_address("ann.smith@example.org")
    assert ann is not None
    assert (ann.display_name, ann.addresses, ann.preferred_address) == (
        "Ann Smith",
        ("Ann.Smith@Example.org",),
        "Ann.Smith@Example.org",
    )
    assert (ann.origin, ann.note, ann.recorded_at, ann.amended_at) == (
        ContactOrigin.COLLECTED,
        None,
        T0,
        None,
    )
    bob = book.find_by_address("bob@example.org")
    assert bob is not None
    assert bob.display_name == ""
    assert bob.contact_id != ann.contact_id
    assert backend.contact_rows() == (2, 2)


def test_collecting_again_adds_nothing_and_changes_nothing(backend: Backend) -> None:
    book = backend.contacts()
    seen = [SeenPerson(f"p{i}@example.org", f"P {i}") for i in range(30)]
    assert book.collect(seen, T0) == 30
    before = book.page(None, None, None, 200)
    assert book.collect(seen, T1) == 0
    assert book.collect([SeenPerson("P3@EXAMPLE.org", "Renamed")], T1) == 0
    assert book.page(None, None, None, 200) == before
    assert book.collect([], T1) == 0


def test_an_asserted_record_is_never_touched_and_never_doubled(backend: Backend) -> None:
    book = backend.contacts()
    record = ContactRecord(
        "Written Down", ("owner@example.org", "alias@example.org"), "owner@example.org", "note"
    )
    new = NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, T0)
    written = book.create(new)
    assert written.state is WriteState.WRITTEN
    seen = [SeenPerson("ALIAS@example.org", "Somebody"), SeenPerson("owner@example.org", "X")]
    assert book.collect(seen, T1) == 0
    assert book.find(new.contact_id) == written.contact
    assert backend.contact_rows() == (1, 2)


def test_an_empty_collected_name_is_filled_once_and_a_held_name_kept(backend: Backend) -> None:
    book = backend.contacts()
    assert (
        book.collect([SeenPerson("a@example.org", ""), SeenPerson("b@example.org", "B")], T0) == 2
    )
    # A name filled in writes no record.
    assert (
        book.collect([SeenPerson("A@example.org", "Ann"), SeenPerson("b@example.org", "C")], T1)
        == 0
    )
    assert book.collect([SeenPerson("a@example.org", "Later")], T1) == 0
    a = book.find_by_address("a@example.org")
    b = book.find_by_address("b@example.org")
    assert a is not None
    assert b is not None
    assert (a.display_name, a.addresses, a.recorded_at) == ("Ann", ("a@example.org",), T0)
    assert b.display_name == "B"
    assert [c.display_name for c in book.page("ann", None, None, 10)] == ["Ann"]


def test_within_one_call_the_first_name_seen_for_an_address_is_kept(backend: Backend) -> None:
    book = backend.contacts()
    seen = [
        SeenPerson("x@example.org", ""),
        SeenPerson("X@example.org", "First"),
        SeenPerson("x@EXAMPLE.org", "Second"),
    ]
    assert book.collect(seen, T0) == 1
    x = book.find_by_address("x@example.org")
    assert x is not None
    assert (x.display_name, x.addresses) == ("First", ("x@example.org",))


def test_a_call_larger_than_one_statement_chunk_collects_every_address(
    backend: Backend,
) -> None:
    book = backend.contacts()
    book.collect([SeenPerson("n700@example.org", "")], T0)
    seen = [SeenPerson(f"n{i}@example.org", "") for i in range(1300)]
    assert book.collect(seen, T1) == 1299
    assert backend.contact_rows() == (1300, 1300)


def test_racing_collections_of_the_same_people_leave_one_record_per_address(
    backend: Backend,
) -> None:
    book = backend.contacts()
    writers = 6
    start = threading.Barrier(writers)
    # Each writer names the same people in its own order, so their writes interleave.
    people = [SeenPerson(f"r{i}@example.org", f"R {i}") for i in range(400)]

    def collect(n: int) -> int:
        mine = people[n * 37 :] + people[: n * 37]
        start.wait()
        return book.collect(mine, T0)

    with ThreadPoolExecutor(max_workers=writers) as pool:
        written = list(pool.map(collect, range(writers)))
    assert sum(written) == 400
    assert backend.contact_rows() == (400, 400)
    keys = frozenset(p.key for p in people)
    assert book.held_keys(keys, frozenset({ContactOrigin.COLLECTED})) == keys


def test_creates_racing_collections_over_the_same_addresses_never_deadlock(
    backend: Backend,
) -> None:
    """Creates name their addresses in descending order, collections in ascending: each
    address ends with one holder and no writer is aborted."""
    book = backend.contacts()
    writers = 8
    start = threading.Barrier(writers)
    addresses = [f"d{i:03}@example.org" for i in range(60)]

    def write(n: int) -> int:
        start.wait()
        if n % 2:
            return book.collect([SeenPerson(a, "") for a in addresses], T0)
        created = 0
        for first in range(n, len(addresses), writers):
            mine = sorted(addresses[first : first + 4], reverse=True)
            record = ContactRecord(f"Creator {n}", tuple(mine), mine[0], None)
            outcome = book.create(NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, T0))
            created += outcome.state is WriteState.WRITTEN
        return created

    with ThreadPoolExecutor(max_workers=writers) as pool:
        list(pool.map(write, range(writers)))
    # Every address is held, and the book holds no more address rows than addresses: each
    # address has exactly one holder.
    assert book.held_keys(addresses, frozenset(ContactOrigin)) == frozenset(addresses)
    assert backend.contact_rows()[1] == len(addresses)
