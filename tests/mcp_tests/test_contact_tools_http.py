"""The six contact tools over Streamable HTTP with the official client: every state each
write answers, the listing's walk and filters, and every refusal, none of which repeats a
value the caller gave, in the answer or in the server log."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from mcp import Client
from mcp.types import CallToolResult

import log_audit
from contacts.traces import LargestRecord, remnants
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.engine import create_store_engine, store_url
from mailfathom.app.contacts.ports import NewContact
from mailfathom.domain.contacts import ContactOrigin, contact_record
from mcp_tests.client import code, over_http, structured, text
from mcp_tests.deployment import KEYS, Deployment
from waiting import wait_for

ZERO = "00000000-0000-0000-0000-000000000000"


def _secret(prefix: str = "book") -> str:
    """A value of its own, letters and digits only, that no log line may carry."""
    value = f"{prefix}{uuid.uuid4().hex[:16]}"
    log_audit.register(value)
    return value


def _address(local: str) -> str:
    address = f"{local}@example.org"
    log_audit.register(address)
    return address


def _calls(d: Deployment, key: str, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    async def work(client: Client) -> list[CallToolResult]:
        return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return over_http(d.url, KEYS[key], work)


def _one(d: Deployment, tool: str, arguments: dict[str, Any], key: str = "full") -> Any:
    (result,) = _calls(d, key, (tool, arguments))
    assert code(result) is None, text(result)
    return structured(result)


def _collected(d: Deployment, name: str, address: str) -> str:
    """A person the deployment picked up from mail, written where the server reads it."""
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        record = contact_record(name, [address], address, None)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, datetime.now(UTC))
        written = SqlContactBook(engine).create(new)
    finally:
        engine.dispose()
    assert written.contact is not None
    return str(written.contact.contact_id)


def test_every_state_of_the_writes_and_reads(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    name, note = _secret("Name"), _secret("note")
    first, second, third = (_address(_secret("addr")) for _ in range(3))
    record = {
        "displayName": name,
        "addresses": [second, first],
        "preferredAddress": first,
        "note": note,
    }
    created = _one(d, "create_contact", record)
    assert created["state"] == "written"
    contact = created["contact"]
    contact_id = contact["contactId"]
    assert contact["addresses"] == [first, second]
    assert (contact["origin"], contact["note"], contact["amendedAt"]) == ("asserted", note, None)

    # A second create of the same person names the holder and nothing else of it, to a
    # caller holding only the writing grant as to any other.
    again = _one(
        d,
        "create_contact",
        {**record, "addresses": [second.upper()], "preferredAddress": second.upper()},
        "contacts-writer",
    )
    assert again == {
        "state": "addressHeldByAnotherContact",
        "contact": None,
        "addressHolderContactId": contact_id,
    }
    assert name not in str(again)
    assert note not in str(again)

    by_id = _one(d, "get_contact", {"contactId": contact_id})
    by_address = _one(d, "get_contact", {"address": second.upper()}, "contacts-reader")
    assert by_id == by_address == {"contact": contact}

    # The whole record: an address left out goes, an omitted note is cleared.
    amended = _one(
        d,
        "update_contact",
        {"contactId": contact_id, "displayName": name, "addresses": [third, first],
         "preferredAddress": third},
    )  # fmt: skip
    assert amended["state"] == "written"
    assert amended["contact"]["addresses"] == [third, first]
    assert amended["contact"]["note"] is None
    assert amended["contact"]["amendedAt"] is not None
    assert _one(d, "get_contact", {"address": second}) == {"contact": None}
    # The address freed by the amendment is anybody's again.
    other = _one(
        d,
        "create_contact",
        {"displayName": name, "addresses": [second], "preferredAddress": second},
    )
    assert other["state"] == "written"
    other_id = other["contact"]["contactId"]
    held = _one(
        d,
        "update_contact",
        {"contactId": other_id, "displayName": name, "addresses": [second, first],
         "preferredAddress": second},
    )  # fmt: skip
    assert held == {
        "state": "addressHeldByAnotherContact",
        "contact": None,
        "addressHolderContactId": contact_id,
    }
    absent = str(uuid.uuid4())
    missing = _one(
        d,
        "update_contact",
        {"contactId": absent, "displayName": name, "addresses": [second],
         "preferredAddress": second},
    )  # fmt: skip
    assert missing == {"state": "notFound", "contact": None, "addressHolderContactId": None}

    # A collected person is taken on first, once; then amended like any other.
    picked = _address(_secret("picked"))
    collected_id = _collected(d, name, picked)
    was_collected = _one(
        d,
        "update_contact",
        {"contactId": collected_id, "displayName": name, "addresses": [picked],
         "preferredAddress": picked, "note": note},
    )  # fmt: skip
    assert was_collected["state"] == "contactWasCollected"
    assert was_collected["contact"] is None
    assert _one(d, "promote_contact", {"contactId": collected_id}) == {"state": "written"}
    assert _one(d, "promote_contact", {"contactId": collected_id}) == {"state": "alreadyAsserted"}
    assert _one(d, "promote_contact", {"contactId": absent}) == {"state": "notFound"}
    promoted = _one(d, "get_contact", {"contactId": collected_id})["contact"]
    assert (promoted["origin"], promoted["note"]) == ("asserted", None)
    taken_on = _one(
        d,
        "update_contact",
        {"contactId": collected_id, "displayName": name, "addresses": [picked],
         "preferredAddress": picked, "note": note},
    )  # fmt: skip
    assert taken_on["state"] == "written"

    # Erasure answers with its counts, and a second one is complete with nothing held.
    erased = _one(d, "delete_contact", {"contactId": contact_id})
    assert erased == {"contactId": contact_id, "wasHeld": True, "addressesErased": 2}
    assert _one(d, "delete_contact", {"contactId": contact_id}) == {
        "contactId": contact_id,
        "wasHeld": False,
        "addressesErased": 0,
    }
    assert _one(d, "get_contact", {"contactId": contact_id}) == {"contact": None}
    assert _one(d, "get_contact", {"address": third}) == {"contact": None}


def test_a_collected_contact_without_a_name_is_not_promoted(mcp_deployment: Deployment) -> None:
    """An asserted record needs a name, so promoting a collected one that holds none is
    refused with the rule, and the record stays as it was."""
    d = mcp_deployment
    picked = _address(_secret("nameless"))
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        record = contact_record(None, [picked], picked, None, unnamed_allowed=True)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.COLLECTED, datetime.now(UTC))
        assert SqlContactBook(engine).create(new).contact is not None
    finally:
        engine.dispose()
    contact_id = str(new.contact_id)
    (refused,) = _calls(d, "contacts-writer", ("promote_contact", {"contactId": contact_id}))
    assert code(refused) == 51011, text(refused)
    assert "name" in text(refused)
    assert picked not in text(refused)
    held = _one(d, "get_contact", {"contactId": contact_id})["contact"]
    assert (held["origin"], held["displayName"]) == ("collected", "")


def test_the_book_names_nobody_only_a_withheld_folder_holds(mcp_deployment: Deployment) -> None:
    """Carol wrote only to the folder withheld from tools: no listing, search by any part
    of her name or address, or lookup by her address gives a caller anything of her, while
    Bob, who wrote to a visible folder, is there."""
    d = mcp_deployment
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


def test_the_book_is_walked_in_name_order_whatever_narrows_it(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    tag = _secret("walk")
    names = [f"{tag} {letter}" for letter in "edcba"]
    for index, name in enumerate(names):
        address = _address(f"{tag}-{index}")
        _one(d, "create_contact", {"displayName": name, "addresses": [address],
                                   "preferredAddress": address})  # fmt: skip
    picked = _address(f"{tag}-picked")
    _collected(d, f"{tag} f", picked)

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


def test_a_mailbox_cursor_is_no_contact_cursor(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    page = _one(d, "list_emails", {"pageSize": 1})
    assert page["nextCursor"]
    (result,) = _calls(d, "full", ("list_contacts", {"cursor": page["nextCursor"]}))
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
    address = _address(_secret("valid"))
    record = {"displayName": "Valid Name", "addresses": [address], "preferredAddress": address}
    return {**record, **({"contactId": str(uuid.uuid4())} if tool == "update_contact" else {})}


@pytest.mark.parametrize(("tool", "arguments", "expected", "rule"), _refusals())
def test_each_refusal_names_the_rule_and_never_the_value(
    mcp_deployment: Deployment, tool: str, arguments: dict[str, Any], expected: int, rule: str
) -> None:
    d = mcp_deployment
    secret = _secret("leak")
    given = {**_written_record(tool), **{k: _filled(v, secret) for k, v in arguments.items()}}
    mark = d.server_log.stat().st_size
    (result,) = _calls(d, "full", (tool, given))
    assert code(result) == expected, text(result)
    answer = text(result)
    assert rule in answer
    assert secret not in answer

    def logged() -> str | None:
        log = d.server_log.read_bytes()[mark:].decode("utf-8", "replace")
        return log if '"tool.call"' in log else None

    log = wait_for(logged, "the call was not logged", timeout=20)
    assert secret not in log
    assert secret.lower() not in log.lower()


def test_nothing_refused_was_written(mcp_deployment: Deployment) -> None:
    """A refused create or amendment leaves the book as it was."""
    d = mcp_deployment
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        with engine.connect() as c:
            before = c.execute(sa.text("SELECT count(*) FROM contact_addresses")).scalar()
        address = _address(_secret("kept"))
        refused = _calls(
            d,
            "full",
            ("create_contact", {"displayName": "X", "addresses": [address],
                                "preferredAddress": "other@example.org"}),
            ("create_contact", {"displayName": "X", "addresses": [address, "bad"],
                                "preferredAddress": address}),
        )  # fmt: skip
        assert [code(r) for r in refused] == [51011, 51011]
        with engine.connect() as c:
            after = c.execute(sa.text("SELECT count(*) FROM contact_addresses")).scalar()
    finally:
        engine.dispose()
    assert after == before


def _rows_holding(engine: sa.Engine, values: list[str]) -> list[str]:
    """Every table and column whose stored value carries one of `values`, compared without
    regard to case."""
    wanted = [v.lower() for v in values]
    found = []
    with engine.connect() as c:
        for table in sa.inspect(engine).get_table_names():
            for row in c.execute(sa.text(f'SELECT * FROM "{table}"')).mappings():
                for column, value in row.items():
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    if isinstance(value, str) and any(w in value.lower() for w in wanted):
                        found.append(f"{table}.{column}")
    return found


def test_an_erasure_leaves_no_trace_in_any_table_or_file(mcp_deployment: Deployment) -> None:
    """A record of the largest size the book holds, amended and then erased over HTTP: what
    the amendment dropped, and then the whole record, is in no row and no file."""
    d = mcp_deployment
    first = LargestRecord.fresh()
    record = {
        "displayName": first.name,
        "addresses": list(first.addresses),
        "preferredAddress": first.addresses[1],
        "note": first.note,
    }
    contact_id = _one(d, "create_contact", record)["contact"]["contactId"]
    second = LargestRecord.fresh(keep=first.addresses[:16])
    amended = {
        "contactId": contact_id,
        "displayName": second.name,
        "addresses": list(second.addresses),
        "preferredAddress": second.addresses[0],
        "note": second.note,
    }
    assert _one(d, "update_contact", amended)["state"] == "written"
    dropped = {k: v for k, v in first.fields.items() if v not in second.fields.values()}
    everything = {**first.fields, **second.fields}
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        assert set(_rows_holding(engine, list(second.fields.values()))) >= {
            "contacts.display_name",
            "contacts.name_key",
            "contacts.note",
            "contact_addresses.address",
        }
        assert _rows_holding(engine, list(dropped.values())) == []
        files = sorted(p for p in d.data_dir.parent.rglob("*") if p.is_file())
        assert remnants(files, dropped) == {}
        erased = _one(d, "delete_contact", {"contactId": contact_id})
        assert (erased["wasHeld"], erased["addressesErased"]) == (True, 32)
        assert _rows_holding(engine, list(everything.values())) == []
    finally:
        engine.dispose()
    # The database's own files (its free pages and its write-ahead log), the content store,
    # the cursor key, the server's log: no file of the deployment holds a stretch of it.
    files = sorted(p for p in d.data_dir.parent.rglob("*") if p.is_file())
    assert remnants(files, everything) == {}
