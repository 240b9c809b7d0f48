"""The six contact tools over Streamable HTTP with the official client: every state each
write answers, and an erasure that leaves no trace in the store, its files or the server's
log. The listing's walk and filters and every refusal are tried in process, in
test_contact_tools.py."""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from mcp import Client
from mcp.types import CallToolResult

from contacts.traces import LargestRecord, remnants
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.engine import create_store_engine, store_url
from mcp_tests import contact_values as book
from mcp_tests.client import code, over_http, structured, text, without_notice
from mcp_tests.deployment import KEYS, Deployment

ZERO = "00000000-0000-0000-0000-000000000000"


def _calls(d: Deployment, key: str, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    async def work(client: Client) -> list[CallToolResult]:
        return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return over_http(d.url, KEYS[key], work)


def _one(d: Deployment, tool: str, arguments: dict[str, Any], key: str = "full") -> Any:
    (result,) = _calls(d, key, (tool, arguments))
    assert code(result) is None, text(result)
    return without_notice(structured(result))


def _collected(d: Deployment, name: str, address: str) -> str:
    """A person the deployment picked up from mail, written where the server reads it."""
    engine = create_store_engine(store_url(load_config(d.config_path).store))
    try:
        return book.collected(engine, name, address)
    finally:
        engine.dispose()


def test_every_state_of_the_writes_and_reads(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    name, note = book.secret("Name"), book.secret("note")
    first, second, third = (book.address(book.secret("addr")) for _ in range(3))
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
    picked = book.address(book.secret("picked"))
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
