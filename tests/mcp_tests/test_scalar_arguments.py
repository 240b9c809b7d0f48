"""Every boolean and integer argument of every published tool takes its own JSON type and
nothing it could be coerced from, with the official client connected to the server in process.

A boolean is true or false; an integer is a whole number, never true or false and never a
fraction. Text spelling such a JSON value is read as that value, as documented for a client
that encodes its arguments twice; any other text is refused. Each refusal is 51017, and the
same call with an accepted value is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mailfathom.domain.codes import Code
from mcp_tests.client import code
from mcp_tests.in_process import InProcess
from mcp_tests.in_process import mailbox as mailbox

PINNED = Path(__file__).with_name("descriptor.json")
ZERO = "00000000-0000-0000-0000-000000000000"
# Arguments making an otherwise valid call of each tool with a boolean or integer argument.
BASE: dict[str, dict[str, Any]] = {
    "list_emails": {},
    "search_emails": {"queryText": "quarterly"},
    "get_email_content": {"storedEmailIds": [ZERO]},
    "set_mail_flags": {"storedEmailId": ZERO},
    "list_contacts": {},
}
NOT_BOOLEAN = [1, 0, 1.0, "yes", "no", "on", "1", "0", "t", "True", "", [True]]
NOT_INTEGER = [True, False, 1.5, "1.5", "true", "one", "", "0x10", [1], {"value": 1}]
AS_BOOLEAN = [True, False, "true", "false"]


def _kind(schema: dict[str, Any]) -> str | None:
    branches = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
    kinds = {b.get("type") for b in branches}
    return kinds.pop() if len(kinds) == 1 and kinds <= {"boolean", "integer"} else None


def _published() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(tool, argument, kind, schema) of every boolean and integer argument published to any
    caller."""
    found = {
        (tool["name"], name, kind, json.dumps(schema, sort_keys=True))
        for tool in json.loads(PINNED.read_text("utf-8"))
        for name, schema in tool["inputSchema"]["properties"].items()
        if (kind := _kind(schema)) is not None
    }
    return [(t, n, k, json.loads(s)) for t, n, k, s in sorted(found)]


PUBLISHED = _published()


def _whole_numbers(schema: dict[str, Any]) -> list[Any]:
    """Accepted spellings of the lowest value the schema allows."""
    low = int(schema.get("minimum", 1))
    return [low, float(low), str(low)]


def _answers(d: InProcess, tool: str, argument: str, values: list[Any]) -> list[CallToolResult]:
    async def work(client: Client) -> list[CallToolResult]:
        return [await client.call_tool(tool, {**BASE[tool], argument: value}) for value in values]

    return d.session("full", work)


def test_the_published_scalars_are_found() -> None:
    assert ("list_emails", "pageSize", "integer") in {p[:3] for p in PUBLISHED}
    assert ("list_emails", "isRemotelySeen", "boolean") in {p[:3] for p in PUBLISHED}
    assert {tool for tool, *_ in PUBLISHED} <= set(BASE)


@pytest.mark.parametrize(
    ("tool", "argument", "kind", "schema"), PUBLISHED, ids=[f"{p[0]}-{p[1]}" for p in PUBLISHED]
)
def test_a_scalar_takes_only_its_own_json_type(
    mailbox: InProcess, tool: str, argument: str, kind: str, schema: dict[str, Any]
) -> None:
    refused = NOT_BOOLEAN if kind == "boolean" else NOT_INTEGER
    accepted = AS_BOOLEAN if kind == "boolean" else _whole_numbers(schema)
    answers = _answers(mailbox, tool, argument, refused + accepted)
    codes = [code(result) for result in answers]
    assert codes[: len(refused)] == [Code.ARGUMENTS_NOT_MATCHING_SCHEMA] * len(refused)
    for value, found in zip(accepted, codes[len(refused) :], strict=True):
        assert found not in (Code.ARGUMENTS_NOT_MATCHING_SCHEMA, Code.UNDIAGNOSED), value
