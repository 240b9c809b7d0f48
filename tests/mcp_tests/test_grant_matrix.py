"""Every grant set against every tool, with the official client connected to the server in
process (a server per caller entry; tests/mcp_tests/test_read_tools_http.py shows the grants
decide the listing over HTTP too, each caller admitted by its key).

A tool is offered exactly when the caller's grant covers every permission its use case
declares; an offered tool is never refused for want of a permission, and a tool that is not
offered answers exactly as a tool that does not exist. Where a grant adds to what a tool
does, the tool is offered in the form the grant covers: get_email_content saves a file only
for a caller holding the files grant, and is the contract's read-only read for any other."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from mailfathom.domain.codes import Code
from mcp_tests.client import UNKNOWN_TOOL, Answer, answer_of, code, structured
from mcp_tests.in_process import MODES, InProcess
from mcp_tests.in_process import mailbox as mailbox

ZERO = "00000000-0000-0000-0000-000000000000"
READ = "read"
SEND = "send"
DRAFT = "drafts"
FILES = "files"
FLAGS = "flags"
ORGANIZE = "organize"
BOOK_READ = "contacts.read"
BOOK_WRITE = "contacts.write"

# What each tool's use case needs, as the tool contract states it.
REQUIRED: dict[str, frozenset[str]] = {
    "list_accounts": frozenset({READ}),
    "list_emails": frozenset({READ}),
    "get_email_content": frozenset({READ}),
    "search_emails": frozenset({READ}),
    "send_email": frozenset({SEND}),
    "reply_to_email": frozenset({SEND, READ}),
    "forward_email": frozenset({SEND, READ}),
    "get_outgoing_email": frozenset({SEND}),
    "cancel_outgoing_email": frozenset({SEND}),
    "save_draft": frozenset({DRAFT}),
    "update_draft": frozenset({DRAFT}),
    "delete_draft": frozenset({DRAFT}),
    "send_draft": frozenset({SEND}),
    "set_mail_flags": frozenset({FLAGS}),
    "organize_email": frozenset({ORGANIZE}),
    "list_contacts": frozenset({BOOK_READ}),
    "get_contact": frozenset({BOOK_READ}),
    "create_contact": frozenset({BOOK_WRITE}),
    "update_contact": frozenset({BOOK_WRITE}),
    "delete_contact": frozenset({BOOK_WRITE}),
    "promote_contact": frozenset({BOOK_WRITE}),
}

GRANTS: dict[str, frozenset[str]] = {
    "nothing": frozenset(),
    "reader": frozenset({READ}),
    "sender": frozenset({SEND}),
    "reader-sender": frozenset({READ, SEND}),
    "drafter": frozenset({DRAFT}),
    "drafter-sender": frozenset({DRAFT, SEND}),
    "reader-files": frozenset({READ, FILES}),
    "files": frozenset({FILES}),
    "flagger": frozenset({FLAGS}),
    "organizer": frozenset({ORGANIZE}),
    "contacts-reader": frozenset({BOOK_READ}),
    "contacts-writer": frozenset({BOOK_WRITE}),
    "contacts": frozenset({BOOK_READ, BOOK_WRITE}),
    "full": frozenset({READ, SEND, DRAFT, FILES, FLAGS, ORGANIZE, BOOK_READ, BOOK_WRITE}),
}
# What saving an attachment with get_email_content needs beside reading.
SAVING = frozenset({READ, FILES})
SAVE_ARGUMENTS = {"savePart", "saveTo"}
# The contract's annotations of a read, and those of a read that may also write a new file
# (never replacing one, and writing nothing more when repeated).
READ_ONLY = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
SAVES_FILES = {**READ_ONLY, "readOnlyHint": False}


def _arguments(tool: str) -> dict[str, Any]:
    key = "grant-matrix-" + uuid.uuid4().hex
    arguments: dict[str, dict[str, Any]] = {
        "list_accounts": {},
        "list_emails": {"pageSize": 1},
        "get_email_content": {"storedEmailIds": [ZERO]},
        "search_emails": {"queryText": "quarterly"},
        "send_email": {
            "account": "work",
            "to": ["nobody@example.com"],
            "subject": "Grant matrix",
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "reply_to_email": {
            "storedEmailId": ZERO,
            "audience": "senderOnly",
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "forward_email": {
            "storedEmailId": ZERO,
            "to": ["nobody@example.com"],
            "plainTextBody": "Grant matrix.",
            "idempotencyKey": key,
        },
        "get_outgoing_email": {"outgoingEmailId": ZERO},
        "cancel_outgoing_email": {"outgoingEmailId": ZERO},
        "save_draft": {"account": "work", "subject": "Grant matrix", "plainTextBody": key},
        "update_draft": {
            "draftId": ZERO,
            "account": "work",
            "subject": "Grant matrix",
            "plainTextBody": "Grant matrix.",
        },
        "delete_draft": {"draftId": ZERO},
        "send_draft": {"draftId": ZERO},
        "set_mail_flags": {"storedEmailId": str(uuid.uuid4()), "seen": True},
        "organize_email": {"action": "archive", "storedEmailIds": [str(uuid.uuid4())]},
        "list_contacts": {"pageSize": 1},
        "get_contact": {"contactId": str(uuid.uuid4())},
        "create_contact": {
            "displayName": "Grant Matrix",
            "addresses": [f"{key}@example.com"],
            "preferredAddress": f"{key}@example.com",
        },
        "update_contact": {
            "contactId": str(uuid.uuid4()),
            "displayName": "Grant Matrix",
            "addresses": [f"{key}@example.com"],
            "preferredAddress": f"{key}@example.com",
        },
        "delete_contact": {"contactId": str(uuid.uuid4())},
        "promote_contact": {"contactId": str(uuid.uuid4())},
    }
    return arguments[tool]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_listing_offers_exactly_the_tools_the_grant_covers(
    mailbox: InProcess, grant: str, mode: str
) -> None:
    async def listed(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    expected = sorted(t for t, needs in REQUIRED.items() if needs <= GRANTS[grant])
    assert sorted(mailbox.session(grant, listed, mode=mode)) == expected


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_offered_tools_answer_and_hidden_ones_are_unknown(
    mailbox: InProcess, grant: str, mode: str
) -> None:
    async def work(client: Client) -> dict[str, tuple[bool, Answer, Answer]]:
        offered = {t.name for t in (await client.list_tools()).tools}
        answers = {}
        for tool in REQUIRED:
            result = await answer_of(client, tool, _arguments(tool))
            unknown = await answer_of(client, tool + "_absent", _arguments(tool))
            answers[tool] = (tool in offered, result, unknown)
        return answers

    answers = mailbox.session(grant, work, mode=mode)
    for tool, (offered, result, unknown) in answers.items():
        assert unknown == UNKNOWN_TOOL, tool
        if offered:
            assert isinstance(result, CallToolResult), tool
            assert code(result) != Code.UNDIAGNOSED, tool
        else:
            assert result == UNKNOWN_TOOL, tool


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_arguments_are_held_to_the_schema_only_on_offered_tools(
    mailbox: InProcess, grant: str, mode: str
) -> None:
    """An argument the schema does not name is refused with 51017 by an offered tool; a tool
    that is not offered answers it exactly as a tool that does not exist, so no schema answer
    tells a caller that a tool it may not use is there."""

    async def work(client: Client) -> dict[str, tuple[bool, Answer, Answer]]:
        offered = {t.name for t in (await client.list_tools()).tools}
        answers = {}
        for tool in REQUIRED:
            arguments = {**_arguments(tool), "unpublished": 1}
            result = await answer_of(client, tool, arguments)
            unknown = await answer_of(client, tool + "_absent", arguments)
            answers[tool] = (tool in offered, result, unknown)
        return answers

    answers = mailbox.session(grant, work, mode=mode)
    for tool, (offered, result, unknown) in answers.items():
        assert unknown == UNKNOWN_TOOL, tool
        if offered:
            assert isinstance(result, CallToolResult), tool
            assert code(result) == Code.ARGUMENTS_NOT_MATCHING_SCHEMA, tool
        else:
            assert result == UNKNOWN_TOOL, tool


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_content_reading_is_read_only_unless_the_grant_lets_it_save(
    mailbox: InProcess, grant: str
) -> None:
    async def listed(client: Client) -> list[dict[str, Any]]:
        tools = (await client.list_tools()).tools
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    offered = mailbox.session(grant, listed)
    found = [t for t in offered if t["name"] == "get_email_content"]
    if READ not in GRANTS[grant]:
        assert found == []
        return
    (tool,) = found
    arguments = set(tool["inputSchema"]["properties"])
    results = set(tool["outputSchema"]["properties"])
    if GRANTS[grant] >= SAVING:
        assert tool["annotations"] == SAVES_FILES
        assert arguments >= SAVE_ARGUMENTS
        assert "savedFile" in results
    else:
        assert tool["annotations"] == READ_ONLY
        assert not SAVE_ARGUMENTS & arguments
        assert "savedFile" not in results
        assert "savePart" not in tool["description"]


@pytest.mark.parametrize("grant", sorted(GRANTS))
def test_saving_arguments_are_unknown_to_a_caller_that_may_not_save(
    mailbox: InProcess, grant: str
) -> None:
    """A caller offered the read-only read is answered for savePart and saveTo as for any
    other argument its schema does not name; a caller offered saving gets past the schema."""
    target = str(mailbox.files_dir / ("grant-matrix-" + uuid.uuid4().hex))
    held_by_nobody = str(uuid.uuid4())
    arguments = {"storedEmailIds": [held_by_nobody], "savePart": "2", "saveTo": target}

    async def work(client: Client) -> tuple[Answer, Answer, Answer]:
        saving = await answer_of(client, "get_email_content", arguments)
        reading = await answer_of(client, "get_email_content", {"storedEmailIds": [held_by_nobody]})
        unknown = await answer_of(client, "get_email_content_absent", arguments)
        return saving, reading, unknown

    saving, reading, unknown = mailbox.session(grant, work)
    assert unknown == UNKNOWN_TOOL
    if READ not in GRANTS[grant]:
        assert saving == reading == UNKNOWN_TOOL
        return
    assert isinstance(saving, CallToolResult)
    assert isinstance(reading, CallToolResult)
    if GRANTS[grant] >= SAVING:
        assert code(saving) not in (Code.ARGUMENTS_NOT_MATCHING_SCHEMA, Code.UNDIAGNOSED)
        assert code(reading) is None
        assert reading.structured_content is not None
        assert reading.structured_content["savedFile"] is None
    else:
        assert code(saving) == Code.ARGUMENTS_NOT_MATCHING_SCHEMA
        assert code(reading) is None
        assert reading.structured_content is not None
        assert "savedFile" not in reading.structured_content
    assert not Path(target).exists()


def _drafts(deployment: InProcess) -> dict[str, int]:
    """Every draft held, by identifier, with its revision."""
    rows = deployment.rows("SELECT draft_id, revision FROM drafts")
    return {str(uuid.UUID(draft_id)): revision for draft_id, revision in rows}


@pytest.mark.parametrize("grant", sorted(g for g in GRANTS if DRAFT in GRANTS[g]))
def test_a_draft_quotes_or_carries_stored_mail_only_for_a_caller_that_may_read_it(
    mailbox: InProcess, grant: str
) -> None:
    """An answer quotes the email it answers (a forward carries its files), and a stored part
    attached is the email's own file: without the read grant both are answered as an email
    nobody holds, the same code and the same words, and nothing is written. A message of its
    own needs no read grant."""
    reads = READ in GRANTS[grant]
    listed = mailbox.call("full", "list_emails", {"accounts": ["work"], "pageSize": 100})
    [stored] = [
        e["storedEmailId"]
        for e in structured(listed)["emails"]
        if e["subject"] == "Quarterly report draft"
    ]
    unknown = str(uuid.uuid4())

    def answer(email_id: str, answering: str) -> dict[str, Any]:
        return {
            "answeredEmailId": email_id,
            "answering": answering,
            "plainTextBody": "Grant matrix " + uuid.uuid4().hex,
        }

    def part(email_id: str) -> dict[str, Any]:
        return {
            **_arguments("save_draft"),
            "attachments": [{"storedEmailId": email_id, "partId": "2"}],
        }

    async def work(client: Client) -> dict[str, CallToolResult]:
        own = await client.call_tool("save_draft", _arguments("save_draft"))
        draft_id = structured(own)["draftId"]
        results = {"own": own}
        for email_id, name in ((stored, "stored"), (unknown, "unknown")):
            for answering in ("senderOnly", "everyone", "forward"):
                results[f"save {answering} {name}"] = await client.call_tool(
                    "save_draft", answer(email_id, answering)
                )
                results[f"update {answering} {name}"] = await client.call_tool(
                    "update_draft", {"draftId": draft_id, **answer(email_id, answering)}
                )
            results[f"part {name}"] = await client.call_tool("save_draft", part(email_id))
        return results

    before = _drafts(mailbox)
    results = mailbox.session(grant, work)
    after = _drafts(mailbox)

    own_id = structured(results["own"])["draftId"]
    for name in (n for n in results if n.endswith(" unknown")):
        wanted = Code.EMAIL_NOT_HELD if name.startswith("part") else Code.EMAIL_NOT_ANSWERABLE
        assert code(results[name]) == wanted, name
        stored_answer = results[name.removesuffix(" unknown") + " stored"]
        if reads:
            assert code(stored_answer) is None, name
        else:
            assert stored_answer.content == results[name].content, name
    if reads:
        assert after[own_id] == 4
        assert len(after) == len(before) + 5
    else:
        assert after == {**before, own_id: 1}
