"""The contact tools' use cases on the in-memory book: each tool's bounds and refusal codes,
what a write answers in every state the book can be in, and a walk of the book by cursor."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

import pytest

from fakes.contacts import InMemoryContactBook
from fakes.deployment import Clock
from mailfathom.adapters.cursor_signing import HmacCursorSigner
from mailfathom.app.contacts.create_contact import ContactCreation
from mailfathom.app.contacts.delete_contact import ContactErasure
from mailfathom.app.contacts.get_contact import ContactLookup
from mailfathom.app.contacts.list_contacts import ContactListing
from mailfathom.app.contacts.ports import NewContact, WriteState
from mailfathom.app.contacts.promote_contact import ContactPromotion
from mailfathom.app.contacts.update_contact import ContactAmendment
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.contacts import ContactOrigin, ContactRecord, ContactWriter
from mailfathom.domain.errors import PermissionDenied, Refusal

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
T1 = datetime(2026, 6, 2, 12, 0, tzinfo=UTC)
READER = Caller(frozenset({Permission.CONTACTS_READ}), "reader")
WRITER = Caller(frozenset({Permission.CONTACTS_WRITE}), "writer")


class Tools:
    """The six contact use cases over one book, on a clock the test sets."""

    def __init__(self) -> None:
        self.book = InMemoryContactBook()
        self.clock = clock = Clock(T0)
        self.listing = ContactListing(self.book, HmacCursorSigner(b"k" * 32))
        self.lookup = ContactLookup(self.book)
        self.creation = ContactCreation(self.book, clock=clock)
        self.amendment = ContactAmendment(self.book, clock=clock)
        self.erasure = ContactErasure(self.book)
        self.promotion = ContactPromotion(self.book)

    def collected(self, name: str, address: str) -> uuid.UUID:
        """A person synchronization collected from mail."""
        record = ContactRecord(name, (address,), address, None)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, T0)
        assert self.book.create(new).state is WriteState.WRITTEN
        return new.contact_id


@pytest.fixture
def tools() -> Tools:
    return Tools()


def _code(call: Callable[[], object]) -> int:
    with pytest.raises(Refusal) as refused:
        call()
    return refused.value.code


def test_a_created_contact_is_asserted_and_a_second_claim_names_only_the_holder(
    tools: Tools,
) -> None:
    written = tools.creation.create(
        WRITER, "Anna", ["anna@example.org", "a.k@example.org"], "a.k@example.org", "fair"
    )
    assert written.state is WriteState.WRITTEN
    contact = written.contact
    assert contact is not None
    assert (contact.origin, contact.recorded_at, contact.amended_at) == (
        ContactOrigin.ASSERTED,
        T0,
        None,
    )
    assert contact.addresses == ("a.k@example.org", "anna@example.org")
    again = tools.creation.create(WRITER, "Other", ["ANNA@example.org"], "ANNA@example.org")
    assert (again.state, again.holder_id, again.contact) == (
        WriteState.ADDRESS_HELD,
        contact.contact_id,
        None,
    )


@pytest.mark.parametrize(
    ("name", "addresses", "preferred", "note"),
    [
        ("", ["a@example.org"], "a@example.org", None),
        ("   ", ["a@example.org"], "a@example.org", None),
        ("N" * 257, ["a@example.org"], "a@example.org", None),
        ("Bell\x07", ["a@example.org"], "a@example.org", None),
        ("\u200b", ["a@example.org"], "a@example.org", None),
        ("\u3164\u3164", ["a@example.org"], "a@example.org", None),
        ("Ali\u200bce", ["a@example.org"], "a@example.org", None),
        ("Anna\ufe0f", ["a@example.org"], "a@example.org", None),
        ("Name", [], "a@example.org", None),
        ("Name", "a@example.org", "a@example.org", None),
        ("Name", ["Anna <a@example.org>"], "a@example.org", None),
        ("Name", ["a@example.org", "A@Example.org"], "a@example.org", None),
        ("Name", ["a@example.org"], "b@example.org", None),
        ("Name", ["a@example.org"], None, None),
        ("Name", ["a@example.org"], "a@example.org", "n" * 4001),
        ("Name", ["a@example.org"], "a@example.org", 7),
    ],
)
def test_a_record_breaking_a_rule_of_the_book_is_refused_and_nothing_written(
    tools: Tools, name: object, addresses: object, preferred: object, note: object
) -> None:
    code = _code(lambda: tools.creation.create(WRITER, name, addresses, preferred, note))
    assert code == Code.CONTACT_RULE_BROKEN
    assert tools.book.row_counts() == (0, 0)


def test_an_amendment_replaces_the_whole_record_and_clears_an_omitted_note(
    tools: Tools,
) -> None:
    created = tools.creation.create(
        WRITER, "Anna", ["a@example.org", "b@example.org"], "a@example.org", "note"
    ).contact
    assert created is not None
    tools.clock.now = T1
    amended = tools.amendment.update(
        WRITER, str(created.contact_id), "Anna K", ["c@example.org"], "c@example.org"
    )
    assert amended.state is WriteState.WRITTEN
    assert amended.contact is not None
    assert (amended.contact.addresses, amended.contact.note, amended.contact.amended_at) == (
        ("c@example.org",),
        None,
        T1,
    )
    # The addresses it no longer names are free again.
    assert tools.lookup.get(READER, None, "a@example.org") is None
    assert tools.creation.create(WRITER, "New", ["a@example.org"], "a@example.org").contact


def test_an_amendment_meets_an_unknown_record_a_collected_one_and_a_held_address(
    tools: Tools,
) -> None:
    unknown = str(uuid.uuid4())
    answer = tools.amendment.update(WRITER, unknown, "N", ["n@example.org"], "n@example.org")
    assert answer.state is WriteState.NOT_FOUND
    collected = tools.collected("Seen", "seen@example.org")
    answer = tools.amendment.update(
        WRITER, str(collected), "Mine", ["seen@example.org"], "seen@example.org"
    )
    assert answer.state is WriteState.WAS_COLLECTED
    mine = tools.creation.create(WRITER, "Mine", ["m@example.org"], "m@example.org").contact
    assert mine is not None
    answer = tools.amendment.update(
        WRITER, str(mine.contact_id), "Mine", ["m@example.org", "SEEN@example.org"], "m@example.org"
    )
    assert (answer.state, answer.holder_id) == (WriteState.ADDRESS_HELD, collected)
    held = tools.lookup.get(READER, str(mine.contact_id), None)
    assert held == mine


def test_promotion_is_one_way_and_makes_a_collected_record_amendable(tools: Tools) -> None:
    collected = tools.collected("Seen Person", "seen@example.org")
    assert tools.promotion.promote(WRITER, str(collected)) is WriteState.WRITTEN
    assert tools.promotion.promote(WRITER, str(collected)) is WriteState.ALREADY_ASSERTED
    assert tools.promotion.promote(WRITER, str(uuid.uuid4())) is WriteState.NOT_FOUND
    promoted = tools.lookup.get(READER, str(collected), None)
    assert promoted is not None
    assert (promoted.origin, promoted.display_name) == (ContactOrigin.ASSERTED, "Seen Person")
    answer = tools.amendment.update(
        WRITER, str(collected), "Now Mine", ["seen@example.org"], "seen@example.org"
    )
    assert answer.state is WriteState.WRITTEN


def test_a_collected_record_without_a_name_is_refused_promotion_by_anyone(
    tools: Tools,
) -> None:
    """An asserted record needs a name: the caller's promotion and the operator's (which
    would also take the addresses on) are refused alike, and the record stays as it was."""
    nameless = tools.collected("", "nameless@example.org")
    before = tools.lookup.get(READER, str(nameless), None)
    for promotion in (tools.promotion, ContactPromotion(tools.book, ContactWriter.OPERATOR)):
        assert _code(partial(promotion.promote, WRITER, str(nameless))) == 51011
        assert tools.lookup.get(READER, str(nameless), None) == before
    by_operator = tools.book.held_keys(
        ["nameless@example.org"], frozenset(ContactOrigin), frozenset({ContactWriter.OPERATOR})
    )
    assert by_operator == set()


def test_an_erasure_says_what_it_removed_and_a_second_one_that_nothing_was_held(
    tools: Tools,
) -> None:
    created = tools.creation.create(
        WRITER, "Gone", ["g1@example.org", "g2@example.org"], "g1@example.org"
    ).contact
    assert created is not None
    erased = tools.erasure.delete(WRITER, str(created.contact_id))
    assert (erased.contact_id, erased.was_held, erased.addresses_erased) == (
        created.contact_id,
        True,
        2,
    )
    again = tools.erasure.delete(WRITER, str(created.contact_id))
    assert (again.was_held, again.addresses_erased) == (False, 0)
    assert tools.book.row_counts() == (0, 0)


@pytest.mark.parametrize(
    "identifier",
    ["", "   ", "not-a-uuid", "00000000-0000-0000-0000-000000000000", "a" * 65, 12, None],
)
def test_text_that_is_no_contact_identifier_is_refused_by_every_tool_naming_one(
    tools: Tools, identifier: object
) -> None:
    calls: list[Callable[[], object]] = [
        lambda: tools.amendment.update(WRITER, identifier, "N", ["n@example.org"], "n@example.org"),
        lambda: tools.promotion.promote(WRITER, identifier),
        lambda: tools.erasure.delete(WRITER, identifier),
    ]
    if identifier is not None:
        calls.append(lambda: tools.lookup.get(READER, identifier, None))
    for call in calls:
        assert _code(call) == Code.NOT_A_CONTACT_IDENTIFIER


def test_a_lookup_names_exactly_one_of_identity_and_address(tools: Tools) -> None:
    created = tools.creation.create(WRITER, "Anna", ["anna@example.org"], "anna@example.org")
    assert created.contact is not None
    assert tools.lookup.get(READER, None, "Anna@EXAMPLE.org") == created.contact
    assert tools.lookup.get(READER, str(created.contact.contact_id), None) == created.contact
    assert tools.lookup.get(READER, None, "nobody@example.org") is None
    assert tools.lookup.get(READER, str(uuid.uuid4()), None) is None
    named: list[tuple[str | None, str | None]] = [
        (None, None),
        (str(created.contact.contact_id), "anna@example.org"),
        (None, "Anna <anna@example.org>"),
        (None, "not an address"),
    ]
    for contact_id, address in named:
        with pytest.raises(Refusal) as refused:
            tools.lookup.get(READER, contact_id, address)
        assert refused.value.code == Code.NOT_A_CONTACT_IDENTIFIER


def test_a_walk_of_the_book_by_cursor_visits_everyone_once_in_name_order(tools: Tools) -> None:
    names = ["bob", "Alice", "Zed", "carol", "dave"]
    for n, name in enumerate(names):
        tools.creation.create(WRITER, name, [f"p{n}@example.org"], f"p{n}@example.org")
    walked: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = tools.listing.list(READER, page_size=2, cursor=cursor)
        walked.extend(c.display_name for c in page.contacts)
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert walked == ["Alice", "bob", "carol", "dave", "Zed"]
    assert pages == 3
    # A page that holds the rest exactly has no cursor onwards.
    assert tools.listing.list(READER, page_size=5).next_cursor is None


def test_a_listing_narrows_by_origin_and_by_search(tools: Tools) -> None:
    tools.creation.create(WRITER, "Anna Kowalska", ["anna@example.org"], "anna@example.org")
    tools.collected("Ben", "ben@kowal.example")
    tools.collected("", "quiet@example.org")

    def names(**options: object) -> list[str]:
        return [c.display_name for c in tools.listing.list(READER, **options).contacts]

    assert names(search="KOWAL") == ["Anna Kowalska", "Ben"]
    assert names(origin="collected") == ["", "Ben"]
    assert names(origin="asserted", search="example") == ["Anna Kowalska"]
    assert names(search="") == ["", "Anna Kowalska", "Ben"]


@pytest.mark.parametrize(
    "options",
    [
        {"page_size": 0},
        {"page_size": 201},
        {"page_size": True},
        {"page_size": "5"},
        {"origin": "peer"},
        {"origin": 1},
        {"search": "x" * 321},
        {"search": "an\u200bna"},
        {"search": ["anna"]},
    ],
)
def test_a_listing_outside_its_bounds_is_refused_not_clamped(
    tools: Tools, options: dict[str, object]
) -> None:
    assert _code(lambda: tools.listing.list(READER, **options)) == 51009


@pytest.mark.parametrize("cursor", ["", "abc", "x" * 300, 5])
def test_a_cursor_not_issued_here_is_refused(tools: Tools, cursor: object) -> None:
    tools.creation.create(WRITER, "Anna", ["anna@example.org"], "anna@example.org")
    assert _code(lambda: tools.listing.list(READER, cursor=cursor)) == 52003


def test_a_cursor_signed_with_another_key_is_refused(tools: Tools) -> None:
    for n in range(3):
        tools.creation.create(WRITER, f"P{n}", [f"p{n}@example.org"], f"p{n}@example.org")
    issued = tools.listing.list(READER, page_size=1).next_cursor
    assert issued is not None
    elsewhere = ContactListing(tools.book, HmacCursorSigner(b"o" * 32))
    assert _code(lambda: elsewhere.list(READER, cursor=issued)) == 52003


def test_reading_needs_the_reading_grant_and_writing_the_writing_one(tools: Tools) -> None:
    with pytest.raises(PermissionDenied):
        tools.listing.list(WRITER)
    with pytest.raises(PermissionDenied):
        tools.lookup.get(WRITER, None, "a@example.org")
    with pytest.raises(PermissionDenied):
        tools.creation.create(READER, "N", ["n@example.org"], "n@example.org")
    assert tools.book.row_counts() == (0, 0)
