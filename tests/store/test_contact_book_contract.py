"""What the contact tools rely on from the book, on SQLite, PostgreSQL and the in-memory
fake alike: one holder per address (racing writers included), whole-record amendments,
one-way promotion (never of a collected record holding no name), and an erasure that
removes the record and every address and says so."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from mailfathom.app.contacts.ports import (
    BookPosition,
    ContactBook,
    NewContact,
    PeerEntry,
    PeerUpkeep,
    WriteState,
)
from mailfathom.domain.contacts import ContactOrigin, ContactRecord, ContactWriter, name_key
from store.conftest import Backend

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def book(backend: Backend) -> ContactBook:
    return backend.contacts()


def _record(name: str, *addresses: str, note: str | None = None) -> ContactRecord:
    return ContactRecord(name, tuple(addresses), addresses[0], note)


def _new(
    record: ContactRecord, origin: ContactOrigin = ContactOrigin.ASSERTED, *, at: datetime = T0
) -> NewContact:
    return NewContact(uuid.uuid4(), record, origin, at)


def test_a_created_contact_reads_back_by_identity_and_by_any_address(
    book: ContactBook,
) -> None:
    record = ContactRecord(
        "Anna Kowalska",
        ("zed@example.test", "Anna@Example.test", "b@example.test"),
        "Anna@Example.test",
        "met at the fair",
    )
    new = _new(record)
    written = book.create(new)
    assert written.state is WriteState.WRITTEN
    contact = written.contact
    assert contact is not None
    assert contact.contact_id == new.contact_id
    assert contact.addresses == ("Anna@Example.test", "b@example.test", "zed@example.test")
    assert contact.preferred_address == "Anna@Example.test"
    assert contact.note == "met at the fair"
    assert contact.origin is ContactOrigin.ASSERTED
    assert contact.recorded_at == T0
    assert contact.amended_at is None
    assert book.find(new.contact_id) == contact
    assert book.find_by_address("ANNA@example.TEST") == contact
    assert book.find_by_address("zed@example.test") == contact
    assert book.find_by_address("nobody@example.test") is None
    assert book.find(uuid.uuid4()) is None


def test_an_address_another_contact_holds_is_answered_with_the_holder(
    book: ContactBook,
) -> None:
    first = _new(_record("One", "one@example.test", "shared@example.test"))
    book.create(first)
    second = book.create(_new(_record("Two", "two@example.test", "SHARED@example.test")))
    assert second.state is WriteState.ADDRESS_HELD
    assert second.holder_id == first.contact_id
    assert second.contact is None
    assert book.find_by_address("two@example.test") is None


def test_twenty_racing_creates_claiming_one_address_leave_exactly_one_holder(
    book: ContactBook,
) -> None:
    start = threading.Barrier(20)

    def claim(n: int) -> tuple[WriteState, uuid.UUID | None, uuid.UUID]:
        new = _new(_record(f"Racer {n}", f"racer{n}@example.test", "contested@example.test"))
        start.wait()
        answer = book.create(new)
        return answer.state, answer.holder_id, new.contact_id

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(claim, range(20)))
    winners = [own for state, _, own in answers if state is WriteState.WRITTEN]
    assert len(winners) == 1
    losers = [holder for state, holder, _ in answers if state is WriteState.ADDRESS_HELD]
    assert losers == [winners[0]] * 19
    holder = book.find_by_address("contested@example.test")
    assert holder is not None
    assert holder.contact_id == winners[0]
    assert len(book.page(None, None, None, 200)) == 1


def test_an_amendment_replaces_the_whole_record(book: ContactBook) -> None:
    new = _new(_record("Old", "keep@example.test", "drop@example.test", note="a note"))
    book.create(new)
    amended = ContactRecord(
        "New Name", ("keep@example.test", "added@example.test"), "added@example.test", None
    )
    answer = book.amend(new.contact_id, amended, T0 + timedelta(hours=1))
    assert answer.state is WriteState.WRITTEN
    contact = answer.contact
    assert contact is not None
    assert contact.display_name == "New Name"
    assert contact.addresses == ("added@example.test", "keep@example.test")
    assert contact.note is None
    assert contact.recorded_at == T0
    assert contact.amended_at == T0 + timedelta(hours=1)
    assert book.find_by_address("drop@example.test") is None
    again = book.amend(new.contact_id, amended, T0 + timedelta(hours=1))
    assert again == answer


def test_an_amendment_meets_not_found_a_collected_record_and_a_held_address(
    book: ContactBook,
) -> None:
    record = _record("X", "x@example.test")
    assert book.amend(uuid.uuid4(), record, T0).state is WriteState.NOT_FOUND
    collected = _new(_record("C", "c@example.test"), ContactOrigin.COLLECTED)
    book.create(collected)
    before = book.find(collected.contact_id)
    answer = book.amend(collected.contact_id, _record("C2", "c@example.test"), T0)
    assert answer.state is WriteState.WAS_COLLECTED
    assert book.find(collected.contact_id) == before
    mine = _new(_record("Mine", "mine@example.test"))
    book.create(mine)
    answer = book.amend(mine.contact_id, _record("Mine", "mine@example.test", "C@example.test"), T0)
    assert answer.state is WriteState.ADDRESS_HELD
    assert answer.holder_id == collected.contact_id
    assert book.find_by_address("mine@example.test") is not None


def test_promotion_runs_once_and_one_way(book: ContactBook) -> None:
    collected = _new(_record("C", "c@example.test", note="kept"), ContactOrigin.COLLECTED)
    book.create(collected)
    before = book.find(collected.contact_id)
    assert book.promote(collected.contact_id) is WriteState.WRITTEN
    after = book.find(collected.contact_id)
    assert after is not None
    assert before is not None
    assert after.origin is ContactOrigin.ASSERTED
    assert (after.display_name, after.addresses, after.note) == (
        before.display_name,
        before.addresses,
        before.note,
    )
    assert book.promote(collected.contact_id) is WriteState.ALREADY_ASSERTED
    assert book.promote(uuid.uuid4()) is WriteState.NOT_FOUND
    answer = book.amend(collected.contact_id, _record("Now mine", "c@example.test"), T0)
    assert answer.state is WriteState.WRITTEN


def test_a_collected_record_without_a_name_stays_collected(book: ContactBook) -> None:
    """Whoever promotes it, the operator included: its addresses stay collection's."""
    record = ContactRecord("", ("n@example.test",), "n@example.test", None)
    nameless = _new(record, ContactOrigin.COLLECTED)
    book.create(nameless)
    before = book.find(nameless.contact_id)
    for writer in (ContactWriter.CALLER, ContactWriter.OPERATOR):
        assert book.promote(nameless.contact_id, writer) is WriteState.UNNAMED
        assert book.find(nameless.contact_id) == before
    for writer, held in (
        (ContactWriter.COLLECTION, {"n@example.test"}),
        (ContactWriter.OPERATOR, set()),
    ):
        keys = book.held_keys(["n@example.test"], frozenset(ContactOrigin), frozenset({writer}))
        assert keys == held


def test_erasure_removes_the_record_and_every_address_and_counts_them(
    book: ContactBook, backend: Backend
) -> None:
    gone = _new(_record("Gone", "g1@example.test", "g2@example.test", "g3@example.test"))
    kept = _new(_record("Kept", "k@example.test"))
    book.create(gone)
    book.create(kept)
    erasure = book.erase(gone.contact_id)
    assert (erasure.was_held, erasure.addresses_erased) == (True, 3)
    assert book.find(gone.contact_id) is None
    assert book.find_by_address("g2@example.test") is None
    again = book.erase(gone.contact_id)
    assert (again.was_held, again.addresses_erased) == (False, 0)
    assert backend.contact_rows() == (1, 1)
    reused = book.create(_new(_record("New", "g1@example.test")))
    assert reused.state is WriteState.WRITTEN


def test_a_page_is_ordered_by_name_key_then_identity_and_walks_on(
    book: ContactBook,
) -> None:
    names = ["bob", "Alice", "álvaro", "Carol", "alice", "Zed", "dave"]
    for n, name in enumerate(names):
        book.create(_new(_record(name, f"p{n}@example.test")))
    walked: list[str] = []
    after: BookPosition | None = None
    while True:
        page = book.page(None, None, after, 2)
        if not page:
            break
        walked.extend(c.display_name for c in page)
        last = page[-1]
        after = BookPosition(name_key(last.display_name), last.contact_id)
    assert sorted(walked, key=name_key) == walked
    assert sorted(walked) == sorted(names)
    everything = book.page(None, None, None, 200)
    keys = [(name_key(c.display_name), c.contact_id) for c in everything]
    assert keys == sorted(keys, key=lambda k: (k[0].encode(), k[1].hex))


def test_a_page_narrows_by_origin_and_by_search_in_name_or_address(
    book: ContactBook,
) -> None:
    book.create(_new(_record("Anna Kowalska", "anna@example.test")))
    book.create(_new(_record("Ben", "ben@Kowal.example")))
    book.create(_new(_record("Cleo", "cleo@example.test"), ContactOrigin.COLLECTED))
    book.create(_new(_record("100% Dan_x", "dan@example.test")))

    def names(search: str | None, origin: ContactOrigin | None = None) -> list[str]:
        return [c.display_name for c in book.page(search, origin, None, 50)]

    assert names("KOWAL") == ["Anna Kowalska", "Ben"]
    assert names(None, ContactOrigin.COLLECTED) == ["Cleo"]
    assert names("example.test", ContactOrigin.ASSERTED) == ["100% Dan_x", "Anna Kowalska"]
    assert names("%") == ["100% Dan_x"]
    assert names("_") == ["100% Dan_x"]
    assert names("n_x") == ["100% Dan_x"]
    assert names("a_na") == []
    assert names("nobody") == []


def test_held_keys_answers_the_addresses_records_of_the_named_origins_hold(
    book: ContactBook,
) -> None:
    book.create(_new(_record("Asserted", "a@example.org")))
    book.create(_new(_record("Collected", "c@example.org"), ContactOrigin.COLLECTED))
    keys = frozenset({"a@example.org", "c@example.org", "nobody@example.org"})
    assert book.held_keys(keys, frozenset(ContactOrigin)) == {"a@example.org", "c@example.org"}
    assert book.held_keys(keys, frozenset({ContactOrigin.ASSERTED})) == {"a@example.org"}
    assert book.held_keys(keys, frozenset()) == frozenset()
    many = frozenset(f"n{i}@example.org" for i in range(1200)) | {"c@example.org"}
    assert book.held_keys(many, frozenset(ContactOrigin)) == {"c@example.org"}


def _peer(account: str, name: str, *addresses: str) -> PeerEntry:
    return PeerEntry(account, name, addresses, addresses[0])


def test_peers_are_asserted_records_kept_in_step_with_the_accounts(book: ContactBook) -> None:
    peers = [_peer("one", "One", "one@example.org"), _peer("two", "Two", "two@example.org")]
    assert book.keep_peers(peers, T0) == PeerUpkeep(written=2, erased=0, left_with_owner=0)
    assert book.keep_peers(peers, T0) == PeerUpkeep(written=0, erased=0, left_with_owner=0)
    one = book.find_by_address("ONE@example.org")
    assert one is not None
    assert (one.display_name, one.origin, one.peer_account_id) == (
        "One",
        ContactOrigin.ASSERTED,
        "one",
    )
    # The owner's note on a peer survives the peer being renamed and readdressed.
    noted = book.amend(one.contact_id, _record("One", "one@example.org", note="ops"), T0)
    assert noted.state is WriteState.WRITTEN
    later = T0 + timedelta(hours=1)
    moved = [_peer("one", "Renamed", "new@example.org", "one@example.org")]
    assert book.keep_peers(moved, later) == PeerUpkeep(written=1, erased=1, left_with_owner=0)
    renamed = book.find(one.contact_id)
    assert renamed is not None
    assert (renamed.display_name, renamed.addresses, renamed.note, renamed.amended_at) == (
        "Renamed",
        ("new@example.org", "one@example.org"),
        "ops",
        later,
    )
    assert book.find_by_address("two@example.org") is None


def test_a_peer_takes_its_address_from_a_collected_record_never_from_an_asserted_one(
    book: ContactBook,
) -> None:
    alone = book.create(_new(_record("Picked", "p@example.org"), ContactOrigin.COLLECTED))
    shared = book.create(
        _new(_record("Both", "b@example.org", "keep@example.org"), ContactOrigin.COLLECTED)
    )
    owner = book.create(_new(_record("Owner's", "o@example.org")))
    assert alone.contact is not None
    assert shared.contact is not None
    assert owner.contact is not None
    peers = [
        _peer("p", "P", "p@example.org"),
        _peer("b", "B", "b@example.org"),
        _peer("o", "O", "o@example.org", "o2@example.org"),
        _peer("only", "Only", "o@example.org"),
    ]
    upkeep = book.keep_peers(peers, T0)
    assert upkeep == PeerUpkeep(written=3, erased=0, left_with_owner=2)
    # The collected record with nothing left is gone; the other keeps its other address.
    assert book.find(alone.contact.contact_id) is None
    kept = book.find(shared.contact.contact_id)
    assert kept is not None
    assert (kept.addresses, kept.preferred_address) == (("keep@example.org",), "keep@example.org")
    # The owner's record is untouched; the peer holds what nobody else asserted.
    assert book.find(owner.contact.contact_id) == owner.contact
    peer_o = book.find_by_address("o2@example.org")
    assert peer_o is not None
    assert (peer_o.peer_account_id, peer_o.addresses) == ("o", ("o2@example.org",))
    held = book.find_by_address("p@example.org")
    assert held is not None
    assert held.peer_account_id == "p"
