"""The text block of a result: compact, and complete once the schema's defaults are filled in.

Every call here goes through the official client, connected to the server in process, which
checks each structuredContent against the tool's outputSchema before handing it back.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import Client

from mcp_tests.client import structured, text
from mcp_tests.in_process import InProcess
from mcp_tests.in_process import mailbox as mailbox
from mcp_tests.result_text import authorship_readings, expand_text


def _full_json(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _reads(d: InProcess) -> dict[str, list[Any]]:
    """One answer of every reading tool, with what it returned as structuredContent."""

    async def work(client: Client) -> dict[str, list[Any]]:
        page = await client.call_tool("list_emails", {"pageSize": 20})
        ids = [e["storedEmailId"] for e in (page.structured_content or {})["emails"]]
        search = await client.call_tool("search_emails", {"queryText": "quarterly"})
        thread = (search.structured_content or {})["matches"][0]["summary"]["threadId"]
        return {
            "list_accounts": [await client.call_tool("list_accounts", {})],
            "list_emails": [page],
            "search_emails": [search],
            "get_email_content": [
                await client.call_tool(
                    "get_email_content",
                    {"storedEmailIds": ids[:10], "includeSanitizedHtml": True},
                ),
                await client.call_tool("get_email_content", {"threadId": thread}),
            ],
        }

    return d.session("full", work)


def test_every_read_tools_text_expands_to_its_structured_content(
    mailbox: InProcess,
) -> None:
    for tool, results in _reads(mailbox).items():
        for result in results:
            full = structured(result)  # raises unless the expansion is exact
            assert full, tool


def test_a_page_of_summaries_is_written_in_well_under_half_the_full_form(
    mailbox: InProcess,
) -> None:
    result = mailbox.call("full", "list_emails", {"pageSize": 20})
    full = structured(result)
    assert len(full["emails"]) == 20
    assert len(text(result)) * 2 < len(_full_json(full))


def test_not_assessed_carries_a_likelihood_of_0_that_the_text_leaves_out(
    mailbox: InProcess,
) -> None:
    """The contract's 0 in structuredContent; the text a model reads carries no number beside
    notAssessed, since there it means nothing (this fixture assesses nothing)."""
    readings = 0
    for results in _reads(mailbox).values():
        for result in results:
            for reading in authorship_readings(result.structured_content):
                readings += 1
                assert reading["state"] == "notAssessed"
                assert reading["likelihood"] == 0
            assert "likelihood" not in text(result)
            for reading in authorship_readings(expand_text(text(result), structured(result))):
                assert reading["likelihood"] == 0
    assert readings > 20


def test_a_default_never_appears_in_the_text(mailbox: InProcess) -> None:
    page = mailbox.call("full", "list_emails", {"pageSize": 20})
    written = json.loads(text(page))
    assert "nextCursor" in written  # the fixture holds more than a page
    assert "includedJunkMail" not in written
    columns = written["emails"]["columns"]
    assert "storedEmailId" in columns
    assert not [c for c in columns if c.startswith(("senderVerification", "machineAuthorship"))]
    assert "remoteFlags.deleted" not in columns
    assert "contentAvailability" not in columns
