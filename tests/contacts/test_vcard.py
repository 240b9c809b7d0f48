"""The book carried out as vCard 4.0 and back in from vCard 3.0 or 4.0: awkward values survive
the round trip on SQLite and PostgreSQL, another program's cards come in with their preferred
address, and a card that cannot be read or breaks a bound is counted, never raised."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cli.operator_cli import local_config
from contacts.vcard_round_trip import OPERATOR, assert_round_trip, kept, whole_book
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.contacts.import_contacts import ImportSummary
from mailfathom.app.contacts.ports import NewContact
from mailfathom.bootstrap import Services
from mailfathom.domain.contacts import Contact, ContactOrigin, ContactRecord

T0 = datetime(2026, 5, 4, 3, 2, 1, 654321, tzinfo=UTC)
AWKWARD_NAMES = (
    "Doe, Jane; Q.",
    "Zoë Ångström-Łukasiewicz 山田 太郎",
    'Back\\slash "quoted" <not an address>',
    "Semicolons;;and,,commas:colons",
)
AWKWARD_NOTE = (
    "First line, with a comma; and a semicolon.\n"
    "Second line with a backslash \\ and a literal \\n that is no break.\n"
    "\n"
    "After a blank line: émigré, naïve, 🎉, Ελληνικά, עברית"
)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    store = ""
    if request.param == "postgresql":
        store = f'DatabaseUrl = "{request.getfixturevalue("migrated_postgres_url")}"'
    with Services.open(load_config(local_config(tmp_path, store=store))) as opened:
        yield opened


@pytest.fixture
def sqlite_services(tmp_path: Path) -> Iterator[Services]:
    with Services.open(load_config(local_config(tmp_path))) as opened:
        yield opened


def _create(services: Services, name: str, *addresses: str, note: str | None = None) -> Contact:
    written = services.contacts().creation.create(
        OPERATOR, name, list(addresses), addresses[-1], note
    )
    assert written.contact is not None
    return written.contact


def _collected(services: Services, name: str, address: str) -> None:
    record = ContactRecord(name, (address,), address, None)
    new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, T0)
    assert SqlContactBook(services.engine).create(new).contact is not None


def _awkward_book(services: Services) -> None:
    for number, name in enumerate(AWKWARD_NAMES):
        _create(services, name, f"first{number}@example.test", f"Second{number}@Example.test")
    _create(services, "Noted Person", "noted@example.test", note=AWKWARD_NOTE)
    _create(services, "Longest Note", "long@example.test", note="ü" * 3999 + "!")
    _create(services, "x" * 256, *(f"many{n}@example.test" for n in range(32)), note="bounds")
    _create(
        services,
        "Long Address",
        "a" * 64 + "@" + ".".join(["b" * 63] * 2) + "." + "c" * 50 + ".example",
    )
    _create(services, "Tagged", "local+tag@xn--bcher-kva.example")
    _collected(services, "Collected, Person", "collected@example.test")
    amended = _create(services, "Amended Later", "amended@example.test", note="old")
    services.contacts().amendment.update(
        OPERATOR,
        str(amended.contact_id),
        "Amended; Later",
        ["amended@example.test", "also@example.test"],
        "also@example.test",
        None,
    )


def test_an_exported_book_with_awkward_values_comes_back_as_it_was(
    services: Services,
) -> None:
    _awkward_book(services)
    book = whole_book(services)
    assert len(book) == len(AWKWARD_NAMES) + 7
    exported = assert_round_trip(services)

    text = exported.decode("utf-8")
    lines = text.split("\r\n")
    assert lines[-1] == ""
    assert all(len(line.encode("utf-8")) <= 75 for line in lines)
    assert "\n" not in text.replace("\r\n", "")
    cards = text.count("BEGIN:VCARD\r\n")
    assert cards == len(book) == text.count("VERSION:4.0\r\n")
    unfolded = text.replace("\r\n ", "")
    assert "FN:Doe\\, Jane\\; Q.\r\n" in unfolded
    assert "NOTE:First line\\, with a comma\\; and a semicolon.\\nSecond line" in unfolded
    assert "a literal \\\\n that is no break" in unfolded
    assert "X-MAILFATHOM-ORIGIN:collected\r\n" in unfolded
    for contact in book:
        assert f"UID:urn:uuid:{contact.contact_id}\r\n" in unfolded
        assert f"EMAIL;PREF=1:{contact.preferred_address}\r\n" in unfolded
    assert unfolded.count(";PREF=1:") == len(book)


def test_importing_one_file_twice_adds_nothing_the_second_time(
    sqlite_services: Services,
) -> None:
    _awkward_book(sqlite_services)
    before = [kept(c) for c in whole_book(sqlite_services)]
    exchange = sqlite_services.contact_exchange()
    exported = exchange.export.export(OPERATOR).data
    assert exchange.importing.import_cards(OPERATOR, exported) == ImportSummary(
        identity_held=len(before)
    )
    # Cards naming no identity are held back by their addresses instead.
    anonymous = b"".join(
        line + b"\r\n" for line in exported.split(b"\r\n") if not line.startswith(b"UID:")
    )
    assert exchange.importing.import_cards(OPERATOR, anonymous) == ImportSummary(
        address_held=len(before)
    )
    assert [kept(c) for c in whole_book(sqlite_services)] == before


# Written the way a desktop address book writes vCard 3.0: folded lines, N beside FN (or N
# alone), TYPE lists in both spellings, a bare UUID as UID, an extended-format REV.
VCARD_3 = (
    "BEGIN:VCARD\r\n"
    "VERSION:3.0\r\n"
    "PRODID:-//Another Address Book//EN\r\n"
    "N:Kowalska;Anna;Maria;Dr.;PhD\r\n"
    "EMAIL;TYPE=INTERNET,HOME:anna.home@example.test\r\n"
    "EMAIL;TYPE=INTERNET,WORK,pref:Anna.Kowalska@Work.example.test\r\n"
    "NOTE:Met at the conference\\, Kraków\\; table 4.\\nLikes tea.\r\n"
    "UID:5D6A1A62-8A9E-4E8F-9E0A-1B2C3D4E5F60\r\n"
    "REV:2024-02-03T04:05:06Z\r\n"
    "END:VCARD\r\n"
    "BEGIN:VCARD\r\n"
    "VERSION:3.0\r\n"
    "FN:Jürgen Groß\r\n"
    "N:Groß;Jürgen;;;\r\n"
    "EMAIL;type=INTERNET;type=WORK:juergen@work.example.test\r\n"
    "EMAIL;type=INTERNET;type=HOME;type=pref:juergen@home.example.te\r\n"
    " st\r\n"
    "EMAIL;type=INTERNET;type=HOME:Juergen@Home.Example.test\r\n"
    "END:VCARD\r\n"
    "BEGIN:VCARD\r\n"
    "VERSION:3.0\r\n"
    "FN:No Preference\r\n"
    "EMAIL;TYPE=INTERNET:first@none.example.test\r\n"
    "EMAIL;TYPE=INTERNET:second@none.example.test\r\n"
    "X-MAILFATHOM-ORIGIN:collected\r\n"
    "END:VCARD\r\n"
)


def test_vcard_3_from_another_program_comes_in_with_its_preferred_address(
    services: Services,
) -> None:
    importing = services.contact_exchange().importing
    summary = importing.import_cards(OPERATOR, VCARD_3.encode("utf-8"))
    assert summary == ImportSummary(imported=3)
    anna, juergen, none = whole_book(services)
    assert anna.display_name == "Dr. Anna Maria Kowalska PhD"
    assert anna.preferred_address == "Anna.Kowalska@Work.example.test"
    assert anna.addresses == ("Anna.Kowalska@Work.example.test", "anna.home@example.test")
    assert anna.note == "Met at the conference, Kraków; table 4.\nLikes tea."
    assert anna.origin is ContactOrigin.ASSERTED
    # Not a urn:uuid, so the book mints the identity.
    assert anna.contact_id != uuid.UUID("5D6A1A62-8A9E-4E8F-9E0A-1B2C3D4E5F60")
    assert anna.recorded_at == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert anna.amended_at is None
    # One address listed twice (by comparison form) is kept once, as first spelt.
    assert juergen.display_name == "Jürgen Groß"
    assert juergen.preferred_address == "juergen@home.example.test"
    assert juergen.addresses == ("juergen@home.example.test", "juergen@work.example.test")
    assert juergen.note is None
    assert none.preferred_address == "first@none.example.test"
    assert none.origin is ContactOrigin.COLLECTED
    for contact in (juergen, none):
        assert abs(contact.recorded_at - datetime.now(UTC)) < timedelta(minutes=5)


def test_a_vcard_4_card_with_ranked_preferences_keeps_the_lowest_rank(
    sqlite_services: Services,
) -> None:
    card = (
        "BEGIN:VCARD\nVERSION:4.0\nFN:Ranked\n"
        "EMAIL;PREF=50:fifty@example.test\nEMAIL;PREF=2:two@example.test\n"
        "EMAIL:none@example.test\n"
        "UID:urn:uuid:0b5e9c1e-7d4f-4c3a-9d2b-6f1e2a3b4c5d\n"
        "CREATED:20200101T000000Z\nREV:20210101T000000Z\nEND:VCARD\n"
    )
    importing = sqlite_services.contact_exchange().importing
    assert importing.import_cards(OPERATOR, card.encode()) == ImportSummary(imported=1)
    (ranked,) = whole_book(sqlite_services)
    assert ranked.contact_id == uuid.UUID("0b5e9c1e-7d4f-4c3a-9d2b-6f1e2a3b4c5d")
    assert ranked.preferred_address == "two@example.test"
    assert ranked.recorded_at == datetime(2020, 1, 1, tzinfo=UTC)
    assert ranked.amended_at == datetime(2021, 1, 1, tzinfo=UTC)


def test_a_value_folded_into_the_card_markers_stays_in_its_card(
    sqlite_services: Services,
) -> None:
    card = (
        "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Folded\r\nEMAIL:folded@example.test\r\n"
        "NOTE:ends with\r\n END:VCARD\r\nNOTE:and\r\n BEGIN:VCARD\r\nEND:VCARD\r\n"
    )
    importing = sqlite_services.contact_exchange().importing
    assert importing.import_cards(OPERATOR, card.encode()) == ImportSummary(imported=1)
    (folded,) = whole_book(sqlite_services)
    assert folded.note == "ends withEND:VCARD\nandBEGIN:VCARD"


def _card(*lines: str) -> bytes:
    return ("BEGIN:VCARD\r\n" + "".join(f"{x}\r\n" for x in lines) + "END:VCARD\r\n").encode()


def _good(number: int) -> bytes:
    return _card("VERSION:4.0", f"FN:Good {number}", f"EMAIL:good{number}@example.test")


def test_malformed_and_out_of_bounds_cards_are_counted_and_the_rest_imported(
    sqlite_services: Services,
) -> None:
    _create(sqlite_services, "Holder", "held@example.test")
    malformed = [
        _card("VERSION:2.1", "FN:Old Version", "EMAIL:old@example.test"),
        _card("FN:No Version", "EMAIL:noversion@example.test"),
        _card("VERSION:4.0", "FN:Strange Origin", "EMAIL:o@example.test", "X-MAILFATHOM-ORIGIN:x"),
        _card("VERSION:4.0", "FN:Bad Line", "this line has no colon", "EMAIL:b@example.test"),
        b"BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Not UTF-8 \xff\xfe\r\nEMAIL:u@example.test\r\n"
        b"END:VCARD\r\n",
        # Runs into the next card without ending.
        b"BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Never Ends\r\nEMAIL:never@example.test\r\n",
    ]
    out_of_bounds = [
        _card("VERSION:4.0", "FN:" + "n" * 257, "EMAIL:longname@example.test"),
        _card("VERSION:4.0", "FN:Too Many", *(f"EMAIL:m{n}@example.test" for n in range(33))),
        _card("VERSION:4.0", "FN:Long Note", "EMAIL:ln@example.test", "NOTE:" + "z" * 4001),
        _card("VERSION:4.0", "FN:Long Address", "EMAIL:" + "a" * 310 + "@example.test"),
        _card("VERSION:4.0", "FN:Not An Address", "EMAIL:Somebody <s@example.test>"),
        _card("VERSION:4.0", "FN:No Address"),
        _card("VERSION:4.0", "EMAIL:noname@example.test"),
        _card("VERSION:4.0", "FN:Bell \x07 in a name", "EMAIL:c@example.test"),
        _card("VERSION:4.0", "FN: ", "EMAIL:blank@example.test"),
    ]
    held = _card(
        "VERSION:4.0", "FN:Claims Held", "EMAIL:ok@example.test", "EMAIL:HELD@example.test"
    )
    data = b"".join(
        [_good(1), *malformed, _good(2), *out_of_bounds, held, _good(3), b"BEGIN:VCARD\r\n"]
    )
    summary = sqlite_services.contact_exchange().importing.import_cards(OPERATOR, data)
    # The file's last card never ends either.
    assert summary == ImportSummary(
        imported=3,
        address_held=1,
        out_of_bounds=len(out_of_bounds),
        malformed=len(malformed) + 1,
    )
    names = [c.display_name for c in whole_book(sqlite_services)]
    assert names == ["Good 1", "Good 2", "Good 3", "Holder"]
    assert sqlite_services.contacts().lookup.get(OPERATOR, None, "ok@example.test") is None
