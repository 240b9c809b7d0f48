"""A call whose arguments do not match the published input schema is answered with 51017,
naming each argument at fault and the rule it broke, with the official client connected to the
server in process (and, for the recipients of a deployment that sends, over Streamable HTTP).
No answer and no log line repeats a value the caller gave, nor its length."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

import log_audit
from mailfathom.domain.codes import Code
from mcp_tests.client import code, structured, text
from mcp_tests.in_process import InProcess, log_mark, logged_since
from mcp_tests.in_process import mailbox as mailbox
from mcp_tests.literal_deployment import LiteralDeployment, call_with
from mcp_tests.literal_deployment import literal as literal

PINNED = Path(__file__).with_name("descriptor.json")
PUBLISHED = sorted({t["name"] for t in json.loads(PINNED.read_text("utf-8"))})
ZERO = "00000000-0000-0000-0000-000000000000"
# A length that occurs nowhere in an answer by chance: a value this long must not be measured
# back to the caller.
ODD_LENGTH = 4711


def _secret() -> str:
    value = "leak-" + uuid.uuid4().hex
    log_audit.register(value)
    return value


def _valid(tool: str) -> dict[str, Any]:
    """Arguments that make a call of the tool its schema accepts."""
    key = "schema-" + uuid.uuid4().hex
    arguments: dict[str, dict[str, Any]] = {
        "list_emails": {"accounts": ["work"], "pageSize": 3},
        "get_email_content": {"storedEmailIds": [ZERO]},
        "search_emails": {"queryText": "quarterly"},
        "send_email": {
            "account": "work",
            "to": ["nobody@example.com"],
            "subject": "Schema check",
            "plainTextBody": "Schema check.",
            "idempotencyKey": key,
        },
        "reply_to_email": {
            "storedEmailId": ZERO,
            "audience": "senderOnly",
            "plainTextBody": "Schema check.",
            "idempotencyKey": key,
        },
        "forward_email": {
            "storedEmailId": ZERO,
            "to": ["nobody@example.com"],
            "plainTextBody": "Schema check.",
            "idempotencyKey": key,
        },
        "get_outgoing_email": {"outgoingEmailId": ZERO},
        "cancel_outgoing_email": {"outgoingEmailId": ZERO},
    }
    return arguments.get(tool, {})


def _refused(result: CallToolResult, *fields: str, hidden: list[str]) -> str:
    """The answer's sentence, once it is shown to be 51017 naming every field and repeating
    nothing of what was given."""
    assert code(result) == Code.ARGUMENTS_NOT_MATCHING_SCHEMA, text(result)
    body = text(result)
    for field in fields:
        assert f"'{field}'" in body, field
    for value in hidden:
        assert value not in body
    assert str(ODD_LENGTH) not in body
    return body


@pytest.mark.parametrize("tool", PUBLISHED)
def test_an_unknown_argument_is_refused_on_every_tool(mailbox: InProcess, tool: str) -> None:
    secret = _secret()
    mark = log_mark()
    arguments = {**_valid(tool), "limit": secret}
    result = mailbox.call("full", tool, arguments)
    body = _refused(result, "limit", hidden=[secret])
    assert "additionalProperties" not in body
    assert secret not in logged_since(mark, 1)


def test_an_unknown_argument_no_longer_widens_a_listing(mailbox: InProcess) -> None:
    """`account` is not `accounts`, and `limit` is not `pageSize`: the call is refused rather
    than answered with a first page of every account."""
    result = mailbox.call("full", "list_emails", {"account": "work", "limit": 3})
    body = _refused(result, "account", "limit", hidden=[])
    assert body.index("'account'") < body.index("'limit'")


@pytest.mark.parametrize(
    ("tool", "arguments", "fields"),
    [
        ("get_outgoing_email", {}, ["outgoingEmailId"]),
        (
            "send_email",
            {"cc": ["copy@example.com"]},
            ["account", "to", "subject", "plainTextBody", "idempotencyKey"],
        ),
        ("reply_to_email", {"storedEmailId": ZERO, "plainTextBody": "x"}, ["audience"]),
    ],
)
def test_a_missing_required_argument_is_named(
    mailbox: InProcess, tool: str, arguments: dict[str, Any], fields: list[str]
) -> None:
    body = _refused(mailbox.call("full", tool, arguments), *fields, hidden=[])
    assert "required" in body


@pytest.mark.parametrize(
    ("tool", "argument", "given"),
    [
        ("list_emails", "pageSize", "p" * ODD_LENGTH),
        ("list_emails", "isRemotelySeen", "leak-not-a-boolean"),
        ("list_emails", "receivedOnOrAfter", "leak-no-date-time"),
        ("list_emails", "receivedBefore", 1777626000),
        ("get_email_content", "includeSanitizedHtml", {"leak-object": 1}),
        ("get_email_content", "storedEmailIds", [ZERO, 7]),
        ("search_emails", "queryText", 4712041793),
        ("search_emails", "resultLimit", 2.718281828),
        ("send_email", "to", {"leak-address": "nobody@example.com"}),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_naming_the_argument(
    mailbox: InProcess, tool: str, argument: str, given: object
) -> None:
    mark = log_mark()
    arguments = {**_valid(tool), argument: given}
    shown = json.dumps(given)
    hidden = [shown, str(given), "leak-"]
    body = _refused(mailbox.call("full", tool, arguments), argument, hidden=hidden)
    assert "must be" in body
    log = logged_since(mark, 1)
    for value in hidden:
        assert value not in log or len(value) < 6


@pytest.mark.parametrize(
    ("tool", "argument", "listed"),
    [
        ("list_emails", "direction", ["newestFirst", "oldestFirst"]),
        ("reply_to_email", "audience", ["senderOnly", "everyone"]),
    ],
)
def test_a_value_outside_the_listed_values_is_refused_with_the_list(
    mailbox: InProcess, tool: str, argument: str, listed: list[str]
) -> None:
    secret = _secret()
    mark = log_mark()
    arguments = {**_valid(tool), argument: secret}
    body = _refused(mailbox.call("full", tool, arguments), argument, hidden=[secret])
    for value in listed:
        assert value in body
    assert secret not in logged_since(mark, 1)


ENTRY_PROPERTIES = "storedEmailId, partId, filePath, fileName and mediaType"


def _with_attachments(tool: str, entries: list[Any]) -> dict[str, Any]:
    arguments = {"account": "work", "subject": "Schema check", "plainTextBody": "Schema check."}
    if tool == "update_draft":
        arguments["draftId"] = ZERO
    return {**arguments, "attachments": entries}


@pytest.mark.parametrize("tool", ["save_draft", "update_draft"])
@pytest.mark.parametrize(
    ("entry", "told"),
    [
        (
            {"storedEmailId": ZERO, "part": "1"},
            "an entry of 'attachments' holds a property it does not take (each takes only "
            f"{ENTRY_PROPERTIES})",
        ),
        (
            {"filePath": "/leak-path", "leak-not-a-name": 1, "x": 2},
            "an entry of 'attachments' holds a property it does not take (each takes only "
            f"{ENTRY_PROPERTIES})",
        ),
        ("leak-a-path", "each entry of 'attachments' must be an object"),
        ({"storedEmailId": ZERO, "partId": 2}, "'partId' in an entry of 'attachments' must be"),
    ],
    ids=["unknown-property", "unknown-properties", "not-an-object", "wrong-type"],
)
def test_an_entry_of_a_list_of_objects_is_told_what_is_wrong_with_it(
    mailbox: InProcess, tool: str, entry: Any, told: str
) -> None:
    """The list is a list: what is wrong is in an entry, and the sentence says what, naming
    only what the schema publishes (never a property name the caller wrote)."""
    mark = log_mark()
    body = _refused(mailbox.call("full", tool, _with_attachments(tool, [entry])), hidden=[])
    assert told in body
    assert "must be a list" not in body
    for written in ("part'", "leak-", "'x'"):
        assert written not in body
        assert written not in logged_since(mark, 1)


def test_several_problems_are_all_named_in_one_order(mailbox: InProcess) -> None:
    secret = _secret()
    problems = {"zeta": 1, "to": {"x": secret}, "audience": 2, "account": "work", "alpha": secret}
    reordered = dict(reversed(list(problems.items())))
    first = text(mailbox.call("full", "send_email", problems))
    again = text(mailbox.call("full", "send_email", reordered))
    assert first == again
    _refused(
        mailbox.call("full", "send_email", problems),
        "to",
        "subject",
        "plainTextBody",
        "idempotencyKey",
        "alpha",
        "audience",
        "zeta",
        hidden=[secret],
    )
    # Published order for the tool's own arguments, then unknown names alphabetically.
    order = ["to", "subject", "plainTextBody", "idempotencyKey", "alpha", "audience", "zeta"]
    positions = [first.index(f"'{name}'") for name in order]
    assert positions == sorted(positions)


def test_a_name_that_is_no_identifier_is_counted_not_repeated(
    mailbox: InProcess,
) -> None:
    secret = _secret()
    name = f"{secret} Quarterly report draft"
    mark = log_mark()
    result = mailbox.call("full", "list_accounts", {name: 1})
    _refused(result, hidden=[secret, "Quarterly"])
    assert secret not in logged_since(mark, 1)


@pytest.mark.parametrize(
    ("tool", "argument", "single", "expected"),
    [
        ("get_email_content", "storedEmailIds", "not-an-identifier", Code.NOT_AN_EMAIL_IDENTIFIER),
        ("list_emails", "accounts", "nobody", Code.ACCOUNT_NOT_SERVED),
        ("search_emails", "folders", "role:Sent", Code.FOLDER_ROLE_NOT_MAPPED),
    ],
)
def test_one_string_where_a_list_is_published_is_a_list_of_one(
    mailbox: InProcess, tool: str, argument: str, single: str, expected: int
) -> None:
    """The string reaches the use case as the one entry of a list, and is refused there for
    what it says, exactly as the list holding it is."""
    listed = mailbox.call("full", tool, {**_valid(tool), argument: [single]})
    one = mailbox.call("full", tool, {**_valid(tool), argument: single})
    assert code(listed) == expected
    assert text(one) == text(listed)


@pytest.mark.parametrize(
    ("tool", "argument"),
    [
        ("send_email", "to"),
        ("send_email", "cc"),
        ("reply_to_email", "cc"),
        ("forward_email", "bcc"),
    ],
)
def test_one_recipient_string_is_a_list_of_one(
    literal: LiteralDeployment, tool: str, argument: str
) -> None:
    """On a deployment that sends, the one string is judged as an address, as in a list."""
    listed = call_with(literal, tool, **{argument: ["no address at all"]})
    one = call_with(literal, tool, **{argument: "no address at all"})
    assert code(listed) == Code.MESSAGE_FIELD_NOT_COMPOSABLE
    assert text(one) == text(listed)


def test_one_account_and_one_folder_read_as_lists_of_one(mailbox: InProcess) -> None:
    as_lists = {"accounts": ["work"], "folders": ["INBOX"]}
    as_strings = {"accounts": "work", "folders": "INBOX"}
    listed = structured(mailbox.call("full", "list_emails", as_lists))
    single = structured(mailbox.call("full", "list_emails", as_strings))
    assert listed["emails"]
    assert single == listed


@pytest.mark.parametrize(
    "bound", ["receivedOnOrAfter", "receivedBefore", "sentOnOrAfter", "sentBefore"]
)
@pytest.mark.parametrize("given", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00"])
def test_a_time_bound_no_utc_time_can_hold_is_refused_as_a_filter(
    mailbox: InProcess, bound: str, given: str
) -> None:
    result = mailbox.call("full", "list_emails", {bound: given})
    assert code(result) == Code.FILTER_NOT_ACCEPTED
    assert given not in text(result)
