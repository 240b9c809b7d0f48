"""`mfctl contact`: the operator reads and writes the contact book with the real program, and
every refusal is one line on standard error that names the rule, never the value, with
nothing on standard output and a non-zero exit status."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cli.operator_cli import Finished, command, local_config, run_to_exit
from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.contacts.ports import NewContact
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.contacts import ContactOrigin, ContactRecord

NAME = "Doe, Jöhanna; Secretname"
FIRST = "johanna.secret@example.test"
SECOND = "J.Doe.Secret@Work.example.test"
NOTE = "Secret note: met at the fair,\nsecond line; ünïcode"
COLLECTED = "collected.secret@example.test"


def _mfctl(config: Path, *args: str) -> Finished:
    return run_to_exit(config.parent, "contact", *args, "--config", str(config))


def _ok(result: Finished) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def _json(config: Path, *args: str) -> Any:
    return json.loads(_ok(_mfctl(config, *args, "--json")))


def _refused(result: Finished, status: int, rule: str, *values: str) -> str:
    """One line on standard error naming the rule, none of `values`, nothing on standard
    output."""
    assert result.returncode == status, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert rule in lines[0]
    for value in values:
        assert value.lower() not in lines[0].lower()
    return lines[0]


def _collected(config: Path, name: str, address: str) -> str:
    record = ContactRecord(name, (address,), address, None)
    new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, datetime.now(UTC))
    with Services.open(load_config(config)) as services:
        assert SqlContactBook(services.engine).create(new).contact is not None
    return str(new.contact_id)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    register_all([NAME, FIRST, SECOND, NOTE, COLLECTED, "Secretname", "Secret note"])
    return local_config(tmp_path)


def test_an_operator_creates_shows_updates_lists_and_erases_a_contact(config: Path) -> None:
    created = _json(
        config, "create", "--name", NAME, "--address", FIRST, "--address", SECOND, "--note", NOTE
    )
    contact_id = created["contactId"]
    # Not told which, the command prefers the first address.
    assert created["preferredAddress"] == FIRST
    assert created["addresses"] == [FIRST, SECOND]
    assert (created["displayName"], created["note"], created["origin"]) == (NAME, NOTE, "asserted")
    assert created["amendedAt"] is None

    shown = _ok(_mfctl(config, "show", contact_id))
    assert f"contact         {contact_id}" in shown
    assert f"name            {NAME}" in shown
    assert f"preferred       {FIRST}" in shown
    assert f"address         {SECOND}" in shown
    assert "note            Secret note: met at the fair,\n                second line" in shown
    assert _json(config, "show", "--address", SECOND.upper()) == created

    # An option not given keeps the record's value.
    renamed = _json(config, "update", contact_id, "--name", "Johanna Doe")
    assert renamed["displayName"] == "Johanna Doe"
    assert (renamed["addresses"], renamed["note"]) == (created["addresses"], NOTE)
    assert renamed["amendedAt"] is not None
    # Addresses are replaced whole; the preferred one stays while it is still among them.
    readdressed = _json(
        config, "update", contact_id, "--address", "new@example.test", "--address", FIRST
    )
    assert readdressed["addresses"] == [FIRST, "new@example.test"]
    assert readdressed["preferredAddress"] == FIRST
    moved = _json(config, "update", contact_id, "--address", "other@example.test")
    assert moved["preferredAddress"] == "other@example.test"
    chosen = _json(
        config,
        "update",
        contact_id,
        "--address",
        "a@example.test",
        "--address",
        "b@example.test",
        "--preferred",
        "B@example.test",
    )
    assert chosen["preferredAddress"] == "b@example.test"
    cleared = _json(config, "update", contact_id, "--note", "")
    assert cleared["note"] is None
    assert cleared["displayName"] == "Johanna Doe"

    collected_id = _collected(config, "Collected Person", COLLECTED)
    listed = _json(config, "list")["contacts"]
    assert [c["contactId"] for c in listed] == [collected_id, contact_id]
    table = _ok(_mfctl(config, "list"))
    assert contact_id in table
    assert collected_id in table
    assert [c["contactId"] for c in _json(config, "list", "--origin", "collected")["contacts"]] == [
        collected_id
    ]
    assert [c["contactId"] for c in _json(config, "list", "--search", "B@EXAMPLE")["contacts"]] == [
        contact_id
    ]
    assert _ok(_mfctl(config, "list", "--search", "nobody-here")).strip() == "No contacts match."

    erased = _ok(_mfctl(config, "delete", contact_id))
    assert erased.strip() == "Erased 1 contact(s) and 2 address(es)."
    again = _ok(_mfctl(config, "delete", contact_id))
    assert again.strip() == "Erased 0 contact(s) and 0 address(es)."
    assert [c["contactId"] for c in _json(config, "list")["contacts"]] == [collected_id]


def test_list_walks_the_whole_book_past_one_page(config: Path) -> None:
    written: list[str] = []
    with Services.open(load_config(config)) as services:
        book = SqlContactBook(services.engine)
        for number in range(203):
            address = f"person{number:03}@example.test"
            record = ContactRecord(f"Person {number:03}", (address,), address, None)
            new = NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, datetime.now(UTC))
            assert book.create(new).contact is not None
            written.append(str(new.contact_id))
    listed = _json(config, "list")["contacts"]
    assert [c["displayName"] for c in listed] == [f"Person {n:03}" for n in range(203)]
    assert [c["contactId"] for c in listed] == written
    table = _ok(_mfctl(config, "list"))
    assert all(table.count(contact_id) == 1 for contact_id in written)


def test_a_collected_contact_is_promoted_before_it_is_updated(config: Path) -> None:
    collected_id = _collected(config, "Collected Person", COLLECTED)
    _refused(
        _mfctl(config, "update", collected_id, "--name", "Taken On"),
        1,
        "contactWasCollected",
        "Taken On",
    )
    promoted = _ok(_mfctl(config, "promote", collected_id)).strip()
    assert promoted == "The contact is asserted now, and its addresses are vouched for."
    again = _ok(_mfctl(config, "promote", collected_id))
    assert again.strip() == "The contact was already asserted and vouched for; nothing changed."
    updated = _json(config, "update", collected_id, "--name", "Taken On")
    assert (updated["displayName"], updated["origin"]) == ("Taken On", "asserted")


def test_a_collected_contact_without_a_name_is_not_promoted(config: Path) -> None:
    nameless_id = _collected(config, "", COLLECTED)
    line = _refused(_mfctl(config, "promote", nameless_id), 2, "51011", COLLECTED)
    assert "name" in line
    (held,) = _json(config, "list")["contacts"]
    assert (held["origin"], held["displayName"]) == ("collected", "")


@pytest.mark.soak
def test_every_refusal_names_the_rule_and_never_the_value(config: Path, tmp_path: Path) -> None:
    held = _json(config, "create", "--name", NAME, "--address", FIRST)["contactId"]
    other = _json(config, "create", "--name", "Other Person", "--address", SECOND)["contactId"]
    collected_id = _collected(config, "Collected Person", COLLECTED)
    absent = str(uuid.uuid4())
    long_name = "Secretname " * 24
    cases: list[tuple[tuple[str, ...], int, str, tuple[str, ...]]] = [
        (("create", "--name", "Another", "--address", FIRST.upper()), 1, held, (FIRST,)),
        (("create", "--name", NAME, "--address", "secret not an address"), 2, "51011", (NAME,)),
        (("create", "--name", long_name, "--address", "ok@example.test"), 2, "51011", ()),
        (("create", "--name", NAME), 2, "51011", (NAME,)),
        (("create", "--address", FIRST), 2, "51011", (FIRST,)),
        (
            ("create", "--name", NAME, "--address", "x@example.test", "--preferred", SECOND),
            2,
            "51011",
            (NAME, SECOND),
        ),
        (
            ("create", "--name", NAME, "--address", "y@example.test", "--note", "Secret" * 700),
            2,
            "51011",
            (NAME, "Secret"),
        ),
        (("update", absent, "--name", NAME), 1, "notFound", (NAME,)),
        (("update", collected_id, "--note", NOTE), 1, "contactWasCollected", (NOTE,)),
        (("update", other, "--address", FIRST), 1, "addressHeldByAnotherContact", (FIRST,)),
        (("update", other), 2, f"error {CommandCode.CONTACT_UPDATE_EMPTY.value}:", ()),
        (("update", "secret-identifier", "--name", NAME), 2, "51010", ("secret-identifier",)),
        (("show", "secret-identifier"), 2, "51010", ("secret-identifier",)),
        (("show", absent), 1, "notFound", ()),
        (("show", "--address", "nobody.secret@example.test"), 1, "notFound", ("nobody.secret",)),
        (("show", "--address", "Secret Person <s@x.test>"), 2, "51010", ("Secret Person",)),
        (("show", held, "--address", FIRST), 2, "51010", (FIRST,)),
        (("show",), 2, "51010", ()),
        (("promote", absent), 1, "notFound", ()),
        (("promote", "secret-identifier"), 2, "51010", ("secret-identifier",)),
        (("delete", "secret-identifier"), 2, "51010", ("secret-identifier",)),
        (("list", "--origin", "secretorigin"), 2, "51009", ("secretorigin",)),
        (("list", "--search", "secret\u200bsearch"), 2, "51009", ("secret",)),
        (
            ("import", str(tmp_path / "secret-missing.vcf")),
            2,
            str(CommandCode.CARD_FILE_UNUSABLE.value),
            ("secret-missing",),
        ),
        (
            ("export", "--output", str(tmp_path / "no-such-folder" / "secret.vcf")),
            2,
            str(CommandCode.CARD_FILE_UNUSABLE.value),
            ("no-such-folder",),
        ),
    ]
    for args, status, rule, values in cases:
        line = _refused(_mfctl(config, *args), status, rule, *values)
        assert NAME.lower() not in line.lower()
    held_line = _refused(
        _mfctl(config, "create", "--name", "Another", "--address", FIRST.upper()),
        1,
        "addressHeldByAnotherContact",
    )
    assert held in held_line
    # Nothing a refusal turned down was written.
    names = [c["displayName"] for c in _json(config, "list")["contacts"]]
    assert names == ["Collected Person", NAME, "Other Person"]


def _raw(config: Path, *args: str, data: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """The command with its standard input and output as bytes (a vCard line ends in CRLF)."""
    return subprocess.run(
        command("contact", *args, "--config", str(config)),
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.soak
def test_the_book_is_exported_as_vcard_and_imported_into_another_deployment(
    config: Path, tmp_path: Path
) -> None:
    _json(config, "create", "--name", NAME, "--address", FIRST, "--address", SECOND, "--note", NOTE)
    _collected(config, "Collected Person", COLLECTED)
    before = _json(config, "list")["contacts"]

    target = tmp_path / "book.vcf"
    written = _ok(_mfctl(config, "export", "--output", str(target)))
    assert written.strip() == f"Exported 2 contact(s) to {target}."
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    data = target.read_bytes()
    assert data.count(b"BEGIN:VCARD\r\nVERSION:4.0\r\n") == 2
    assert b"FN:Doe\\, J\xc3\xb6hanna\\; Secretname\r\n" in data
    assert f"EMAIL;PREF=1:{FIRST}\r\n".encode() in data
    assert b"X-MAILFATHOM-ORIGIN:collected\r\n" in data
    on_stdout = _raw(config, "export")
    assert on_stdout.returncode == 0, on_stdout.stderr
    assert on_stdout.stdout == data
    assert on_stdout.stderr.decode().strip() == "Exported 2 contact(s)."

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = local_config(elsewhere)
    imported = _ok(_mfctl(other, "import", str(target)))
    assert imported.strip() == (
        "Imported 2 contact(s); skipped 0: 0 whose identity is held, 0 with an address "
        "another contact holds, 0 outside the book's bounds, 0 malformed."
    )
    after = _json(other, "list")["contacts"]
    assert [{k: c[k] for k in c if k != "recordedAt"} for c in after] == [
        {k: c[k] for k in c if k != "recordedAt"} for c in before
    ]
    again = _raw(other, "import", "-", data=data + b"BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Cut\r\n")
    assert again.returncode == 0, again.stderr
    assert again.stdout.decode().strip() == (
        "Imported 0 contact(s); skipped 3: 2 whose identity is held, 0 with an address "
        "another contact holds, 0 outside the book's bounds, 1 malformed."
    )
    for output in (imported, again.stdout.decode(), again.stderr.decode()):
        assert FIRST not in output
        assert "Secretname" not in output
    assert _json(other, "list")["contacts"] == after


def test_a_note_cannot_steer_the_terminal_it_is_shown_on(config: Path) -> None:
    note = "Secret \x1b[2J\x1b[31mred\r overwritten\u202eevil\nsecond\tline"
    created = _json(
        config, "create", "--name", "Steering", "--address", "s@example.test", "--note", note
    )
    assert created["note"] == note
    shown = _ok(_mfctl(config, "show", created["contactId"]))
    assert "\x1b" not in shown
    assert "\r" not in shown
    assert "\u202e" not in shown
    assert "note            Secret \\u001b[2J\\u001b[31mred\\u000d overwritten\\u202eevil" in shown
    # A tab is only white space on a terminal.
    assert re.search(r"^ {16}second\s+line$", shown, re.MULTILINE)


def test_a_note_shows_every_character_that_renders_as_nothing(config: Path) -> None:
    hidden = "\u200b\u200d\u2060\ufeff\u00ad\u061c\u200e\ufe0f\U000e0041\U000e0100\u034f"
    note = f"Pay{hidden}now"
    created = _json(
        config, "create", "--name", "Quiet", "--address", "q@example.test", "--note", note
    )
    shown = _ok(_mfctl(config, "show", created["contactId"]))
    assert [hex(ord(c)) for c in shown if c in hidden] == []
    assert (
        "note            Pay\\u200b\\u200d\\u2060\\ufeff\\u00ad\\u061c\\u200e\\ufe0f"
        "\\U000e0041\\U000e0100\\u034fnow"
    ) in shown
