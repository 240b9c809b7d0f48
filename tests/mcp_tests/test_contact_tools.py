"""The contact tools with the official client connected to the server in process: the
listing's walk and filters, and every refusal, none of which repeats a value the caller gave,
in the answer or in the log; a nameless collected record not promoted; nobody the book names
whom only a withheld folder holds. Every state each write answers, and an erasure leaving no
trace, are tried over Streamable HTTP in test_contact_tools_http.py."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mcp_tests import contact_values as book
from mcp_tests.client import code, structured, text, without_notice
from mcp_tests.in_process import InProcess, log_mark, logged_since
from mcp_tests.in_process import mailbox as mailbox

ZERO = "00000000-0000-0000-0000-000000000000"


def _one(d: InProcess, tool: str, arguments: dict[str, Any], caller: str = "full") -> Any:
    (result,) = d.calls(caller, (tool, arguments))
    assert code(result) is None, text(result)
    return without_notice(structured(result))


def test_the_book_is_walked_in_name_order_whatever_narrows_it(mailbox: InProcess) -> None:
    d = mailbox
    tag = book.secret("walk")
    names = [f"{tag} {letter}" for letter in "edcba"]
    for index, name in enumerate(names):
        address = book.address(f"{tag}-{index}")
        _one(d, "create_contact", {"displayName": name, "addresses": [address],
                                   "preferredAddress": address})  # fmt: skip
    picked = book.address(f"{tag}-picked")
    book.collected(d.services.engine, f"{tag} f", picked)

    seen: list[str] = []
    cursor = None
    while True:
        arguments: dict[str, Any] = {"search": tag.upper(), "pageSize": 2}
        if cursor:
            arguments["cursor"] = cursor
        page = _one(d, "list_contacts", arguments, "contacts-reader")
        assert len(page["contacts"]) <= 2
        seen.extend(c["displayName"] for c in page["contacts"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == sorted([*names, f"{tag} f"])

    asserted = _one(d, "list_contacts", {"search": tag, "origin": "asserted"})
    assert [c["displayName"] for c in asserted["contacts"]] == sorted(names)
    collected = _one(d, "list_contacts", {"search": tag, "origin": "collected"})
    assert [c["addresses"] for c in collected["contacts"]] == [[picked]]
    by_address = _one(d, "list_contacts", {"search": f"{tag}-3@EXAMPLE"})
    assert [c["displayName"] for c in by_address["contacts"]] == [f"{tag} b"]

    # A contact cursor is not bound to the filters: the walk goes on under others.
    first = _one(d, "list_contacts", {"search": tag, "pageSize": 1})
    onward = _one(
        d, "list_contacts", {"search": tag, "origin": "collected", "cursor": first["nextCursor"]}
    )
    assert [c["displayName"] for c in onward["contacts"]] == [f"{tag} f"]


def test_a_mailbox_cursor_is_no_contact_cursor(mailbox: InProcess) -> None:
    d = mailbox
    page = _one(d, "list_emails", {"pageSize": 1})
    assert page["nextCursor"]
    (result,) = d.calls("full", ("list_contacts", {"cursor": page["nextCursor"]}))
    assert code(result) == 52003


def _refusals() -> list[Any]:
    long_name = "N" * 257
    cases: list[Any] = [
        ("list_contacts", {"pageSize": 0}, 51009, "pageSize"),
        ("list_contacts", {"pageSize": 201}, 51009, "pageSize"),
        ("list_contacts", {"origin": "{secret}"}, 51009, "origin"),
        ("list_contacts", {"search": "{secret}" + "s" * 320}, 51009, "320"),
        ("list_contacts", {"search": "{secret}\u200b"}, 51009, "renders as nothing"),
        ("list_contacts", {"search": "{secret}\u0007"}, 51009, "renders as nothing"),
        ("list_contacts", {"cursor": "{secret}"}, 52003, "cursor"),
        ("get_contact", {}, 51010, "exactly one"),
        ("get_contact", {"contactId": ZERO, "address": "{secret}@example.org"}, 51010, "one"),
        ("get_contact", {"contactId": "{secret}"}, 51010, "contactId"),
        ("get_contact", {"contactId": ZERO}, 51010, "contactId"),
        ("get_contact", {"contactId": " "}, 51010, "contactId"),
        ("get_contact", {"address": "Somebody <{secret}@example.org>"}, 51010, "address"),
        ("get_contact", {"address": "{secret}"}, 51010, "address"),
        ("update_contact", {"contactId": "{secret}"}, 51010, "contactId"),
        ("delete_contact", {"contactId": "{secret}"}, 51010, "contactId"),
        ("promote_contact", {"contactId": ZERO}, 51010, "contactId"),
        ("create_contact", {"displayName": " "}, 51011, "name"),
        ("create_contact", {"displayName": long_name + "{secret}"}, 51011, "256"),
        ("create_contact", {"displayName": "{secret}\n"}, 51011, "control"),
        ("create_contact", {"displayName": "\u200b"}, 51011, "renders as nothing"),
        ("create_contact", {"displayName": "{secret}\u2060"}, 51011, "renders as nothing"),
        ("update_contact", {"displayName": "Ali\u200bce {secret}"}, 51011, "renders as nothing"),
        ("create_contact", {"addresses": []}, 51011, "at least one"),
        ("create_contact", {"addresses": [f"a{i}@example.org" for i in range(33)]}, 51011, "32"),
        ("create_contact", {"addresses": ["{secret}"]}, 51011, "not an address"),
        ("create_contact", {"addresses": ["x <{secret}@example.org>"]}, 51011, "not an address"),
        ("create_contact", {"addresses": ["{secret}@example.org", "{secret}@EXAMPLE.org"],
                            "preferredAddress": "{secret}@example.org"}, 51011, "twice"),
        ("create_contact", {"preferredAddress": "{secret}@example.org"}, 51011, "preferred"),
        ("create_contact", {"note": "{secret}" + "n" * 4000}, 51011, "4000"),
    ]  # fmt: skip
    return [pytest.param(*case, id=f"{case[0]}-{index}") for index, case in enumerate(cases)]


def _filled(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return value.replace("{secret}", secret)
    if isinstance(value, list):
        return [_filled(v, secret) for v in value]
    return value


def _written_record(tool: str) -> dict[str, Any]:
    if tool not in {"create_contact", "update_contact"}:
        return {}
    address = book.address(book.secret("valid"))
    record = {"displayName": "Valid Name", "addresses": [address], "preferredAddress": address}
    return {**record, **({"contactId": str(uuid.uuid4())} if tool == "update_contact" else {})}


@pytest.mark.parametrize(("tool", "arguments", "expected", "rule"), _refusals())
def test_each_refusal_names_the_rule_and_never_the_value(
    mailbox: InProcess, tool: str, arguments: dict[str, Any], expected: int, rule: str
) -> None:
    d = mailbox
    secret = book.secret("leak")
    given = {**_written_record(tool), **{k: _filled(v, secret) for k, v in arguments.items()}}
    mark = log_mark()
    (result,) = d.calls("full", (tool, given))
    assert code(result) == expected, text(result)
    answer = text(result)
    assert rule in answer
    assert secret not in answer
    log = logged_since(mark)
    assert secret not in log
    assert secret.lower() not in log.lower()


def test_nothing_refused_was_written(mailbox: InProcess) -> None:
    """A refused create or amendment leaves the book as it was."""
    d = mailbox
    count = "SELECT count(*) FROM contact_addresses"
    before = d.rows(count)
    address = book.address(book.secret("kept"))
    refused = d.calls(
        "full",
        ("create_contact", {"displayName": "X", "addresses": [address],
                            "preferredAddress": "other@example.org"}),
        ("create_contact", {"displayName": "X", "addresses": [address, "bad"],
                            "preferredAddress": address}),
    )  # fmt: skip
    assert [code(r) for r in refused] == [51011, 51011]
    assert d.rows(count) == before


def test_a_collected_contact_without_a_name_is_not_promoted(mailbox: InProcess) -> None:
    """An asserted record needs a name, so promoting a collected one that holds none is
    refused with the rule, and the record stays as it was."""
    d = mailbox
    picked = book.address(book.secret("nameless"))
    contact_id = book.collected(d.services.engine, "", picked)
    (refused,) = d.calls("contacts-writer", ("promote_contact", {"contactId": contact_id}))
    assert code(refused) == 51011, text(refused)
    assert "name" in text(refused)
    assert picked not in text(refused)
    held = _one(d, "get_contact", {"contactId": contact_id})["contact"]
    assert (held["origin"], held["displayName"]) == ("collected", "")


def test_the_book_names_nobody_only_a_withheld_folder_holds(mailbox: InProcess) -> None:
    """Carol wrote only to the folder withheld from tools: no listing, search by any part
    of her name or address, or lookup by her address gives a caller anything of her, while
    Bob, who wrote to a visible folder, is there."""
    d = mailbox
    for search in ("carol", "CARO", "carol@example.org", "Carol Hidden", "hidden"):
        page = _one(d, "list_contacts", {"search": search}, "contacts-reader")
        assert page["contacts"] == [], search
    assert _one(d, "get_contact", {"address": "carol@example.org"}, "contacts") == {"contact": None}
    walked: list[Any] = []
    cursor = None
    while True:
        page = _one(d, "list_contacts", {"pageSize": 200, **({"cursor": cursor} if cursor else {})})
        walked.extend(page["contacts"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert "carol" not in str(walked).lower()
    bob = _one(d, "get_contact", {"address": "bob@example.org"}, "contacts-reader")["contact"]
    assert (bob["displayName"], bob["origin"]) == ("Bob Example", "collected")
