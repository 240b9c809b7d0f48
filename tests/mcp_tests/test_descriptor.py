"""The advertised tools/list is contract: any drift from the pinned copy fails the build.

The pinned copy holds every distinct descriptor some caller of the test deployment is offered,
sorted by name: a tool offered in more than one form (get_email_content, read-only, or saving a
file for a caller holding the files grant) appears once per form.

Regenerate the pinned copy deliberately with MAILFATHOM_PIN_DESCRIPTOR=1 after a reviewed change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mcp import Client

from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT, MAIL_CONTENT_IS_DATA, UNTRUSTED_KEY
from mcp_tests.client import over_http
from mcp_tests.deployment import KEYS, Deployment

PINNED = Path(__file__).with_name("descriptor.json")
# The contract's table: sending is an open-world write that cannot be undone; withdrawing a
# queued send destroys it without reaching anybody; reading one back is a closed-world read.
SENDS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": True,
    "openWorldHint": True,
}
# The form of get_email_content offered to a caller that may save: savePart/saveTo writes a
# new file, so it is not read-only, never replaces anything, and a repeated save writes
# nothing more. Every other caller is offered the contract's read-only read.
SAVING_CONTENT = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
ANNOTATIONS_OF = {
    "send_email": SENDS,
    "reply_to_email": SENDS,
    "forward_email": SENDS,
    "send_draft": SENDS,
    # A draft is written to the owner's own mail server: two saves are two drafts; an edit
    # states the whole message (what it leaves out is gone); a deletion cannot be undone.
    "save_draft": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": True,
    },
    "update_draft": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    },
    "delete_draft": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    },
    "cancel_outgoing_email": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    # A flag change reaches the owner's own mail server; a replace or a removal takes a
    # keyword or a flag off, and each value is stated, so asking twice asks for the same.
    "set_mail_flags": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    },
    # Mail is filed elsewhere or loses a keyword on the owner's own server (not additive);
    # nothing is deleted for good, and the same place or keyword asked twice is one change.
    "organize_email": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    },
    # The contact book: the contract's table of the six tools. None reaches past this
    # deployment's own store.
    "create_contact": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    },
    "update_contact": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "delete_contact": {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    "promote_contact": {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    },
}
ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}


def _advertised(d: Deployment) -> list[dict[str, Any]]:
    async def work(client: Client) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]

    tools = over_http(d.url, KEYS["full"], work, mode="legacy")
    return sorted(tools, key=lambda t: t["name"])


def _offered(d: Deployment) -> list[dict[str, Any]]:
    """Every distinct descriptor offered to some caller, by name, then the shorter form
    first."""

    async def work(client: Client) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools]

    found = {
        json.dumps(tool, sort_keys=True): tool
        for caller, key in KEYS.items()
        if caller != "metrics"
        for tool in over_http(d.url, key, work, mode="legacy")
    }
    return [found[k] for k in sorted(found, key=lambda k: (found[k]["name"], len(k), k))]


def _annotations(tool: dict[str, Any]) -> dict[str, bool]:
    if tool["name"] == "get_email_content" and "saveTo" in tool["inputSchema"]["properties"]:
        return SAVING_CONTENT
    return ANNOTATIONS_OF.get(tool["name"], ANNOTATIONS)


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = list(schema.get("properties", {}).items())
    for definition in schema.get("$defs", {}).values():
        found.extend(definition.get("properties", {}).items())
    return found


def test_tools_list_matches_the_pinned_descriptor(mcp_deployment: Deployment) -> None:
    advertised = _offered(mcp_deployment)
    if os.environ.get("MAILFATHOM_PIN_DESCRIPTOR") == "1":
        PINNED.write_text(json.dumps(advertised, indent=2, sort_keys=True) + "\n", "utf-8")
    assert advertised == json.loads(PINNED.read_text("utf-8"))


def test_every_descriptor_follows_the_conventions(mcp_deployment: Deployment) -> None:
    advertised = _offered(mcp_deployment)
    titles = {t["name"]: t["title"] for t in advertised}
    assert titles == {
        "get_email_content": "Get email content",
        "list_accounts": "List accounts",
        "list_emails": "List emails",
        "search_emails": "Search emails",
        "send_email": "Send an email",
        "reply_to_email": "Reply to an email",
        "forward_email": "Forward an email",
        "get_outgoing_email": "Check a queued send",
        "cancel_outgoing_email": "Withdraw a queued send",
        "save_draft": "Save a draft",
        "update_draft": "Edit a draft",
        "delete_draft": "Delete a draft",
        "send_draft": "Send a draft",
        "set_mail_flags": "Set mail flags",
        "organize_email": "Organize emails",
        "list_contacts": "List contacts",
        "get_contact": "Get contact",
        "create_contact": "Create contact",
        "update_contact": "Update contact",
        "delete_contact": "Delete contact",
        "promote_contact": "Promote contact",
    }
    for tool in advertised:
        assert tool["annotations"] == _annotations(tool), tool["name"]
        assert "mail server" in tool["description"]
        # An argument the schema does not name is refused, and the schema says so.
        assert tool["inputSchema"]["additionalProperties"] is False, tool["name"]
        for name, schema in _properties(tool["inputSchema"]):
            assert schema.get("description"), (tool["name"], name)
        assert tool["outputSchema"]["type"] == "object"
        for name, schema in _properties(tool["outputSchema"]):
            assert schema.get("description"), (tool["name"], name)


def test_content_reading_is_pinned_read_only_and_saving(mcp_deployment: Deployment) -> None:
    """The contract's get_email_content, and the form that also saves a file."""
    forms = [t for t in _offered(mcp_deployment) if t["name"] == "get_email_content"]
    saving = {"savePart", "saveTo"}
    assert [set(t["inputSchema"]["properties"]) & saving for t in forms] == [set(), saving]
    assert [t["annotations"] for t in forms] == [ANNOTATIONS, SAVING_CONTENT]
    assert ["savedFile" in t["outputSchema"]["properties"] for t in forms] == [False, True]


def test_search_offers_no_way_to_page_or_widen_extracts(mcp_deployment: Deployment) -> None:
    search = next(t for t in _advertised(mcp_deployment) if t["name"] == "search_emails")
    arguments = set(search["inputSchema"]["properties"])
    assert not arguments & {"cursor", "offset", "page", "snippetLength", "extractCharacters"}
    # queryText, matchPattern or both: neither is required on its own.
    assert search["inputSchema"].get("required", []) == []


def test_account_listing_schema_publishes_no_connection_detail(
    mcp_deployment: Deployment,
) -> None:
    listing = next(t for t in _advertised(mcp_deployment) if t["name"] == "list_accounts")
    names = {name.lower() for name, _ in _properties(listing["outputSchema"])}
    for forbidden in ("host", "port", "username", "user", "secret", "password", "server"):
        assert forbidden not in names


def test_enumerations_travel_as_camel_case_names(mcp_deployment: Deployment) -> None:
    flat = json.dumps(_advertised(mcp_deployment))
    for spelling in (
        '"newestFirst", "oldestFirst"',
        '"available", "exceededSizeLimit", "awaitingStorageHeadroom"',
        '"none", "bodyCharacterLimit", "readCharacterBudget"',
        '"lexical", "hybrid"',
        '"inactive", "available", "degraded"',
        '"notRequested", "unavailable"',
    ):
        assert spelling in flat, spelling


def _carries_mail_content(schema: Any) -> bool:
    if isinstance(schema, dict):
        if schema.get(UNTRUSTED_KEY) is True:
            return True
        return any(_carries_mail_content(v) for v in schema.values())
    if isinstance(schema, list):
        return any(_carries_mail_content(v) for v in schema)
    return False


def test_every_tool_returning_mail_content_says_it_is_untrusted(
    mcp_deployment: Deployment,
) -> None:
    """Decided by the advertised output schema alone: a tool whose result has a property
    marked as mail content carries the one shared sentence and a contentTrust notice."""
    returning = set()
    for tool in _offered(mcp_deployment):
        output = tool["outputSchema"]
        if _carries_mail_content(output):
            returning.add(tool["name"])
            assert MAIL_CONTENT_IS_DATA in tool["description"], tool["name"]
            assert "contentTrust" in output["required"], tool["name"]
            assert not _carries_mail_content(output["properties"]["contentTrust"])
        else:
            assert "contentTrust" not in output["properties"], tool["name"]
        # Every marked property says so in the words a model reads, and nothing else does.
        for name, schema in _properties(output) + _nested_properties(output):
            marked = schema.get(UNTRUSTED_KEY) is True
            assert marked == str(schema.get("description", "")).startswith(MAIL_CONTENT), name
    assert {
        "list_emails",
        "search_emails",
        "get_email_content",
        "list_contacts",
        "get_contact",
        "get_outgoing_email",
    } <= returning


def _nested_properties(schema: Any) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                found.extend((k, v) for k, v in value.items() if isinstance(v, dict))
            found.extend(_nested_properties(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_nested_properties(value))
    return found
