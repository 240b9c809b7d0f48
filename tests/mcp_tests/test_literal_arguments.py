"""Every text argument of every published tool reaches its use case as the text the caller
sent, over Streamable HTTP with the official client. Text that reads as JSON ("null", "true",
"1", "[]", "{}") is a filter that applies literally, a value refused for what it says, or the
subject and body of the message the test SMTP server receives."""

from __future__ import annotations

import email
import email.policy
import json
import time
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mcp_tests.client import call, code, over_stdio, structured
from mcp_tests.literal_deployment import (
    BASE,
    KEY,
    KEYWORDS,
    TEXTS,
    LiteralDeployment,
    call_with,
    subject_of,
)
from mcp_tests.literal_deployment import literal as literal
from servers.smtp import Received

# Each text argument of each published tool, with what its text is: refused with a code, ...
REFUSED = [
    ("list_emails", "senderAddress", 51002),
    ("list_emails", "recipientAddress", 51002),
    ("list_emails", "cursor", 52001),
    ("search_emails", "senderAddress", 51002),
    ("search_emails", "recipientAddress", 51002),
    ("get_email_content", "threadId", 51008),
    # Either save argument alone is half a save: the text is not read as an omission.
    ("get_email_content", "savePart", 51018),
    ("get_email_content", "saveTo", 51018),
    ("send_email", "account", 53001),
    ("reply_to_email", "storedEmailId", 51004),
    ("forward_email", "storedEmailId", 51004),
    ("get_outgoing_email", "outgoingEmailId", 51016),
    ("cancel_outgoing_email", "outgoingEmailId", 51016),
    # Outside the published enumerations: refused against the schema, naming the values.
    ("list_emails", "direction", 51017),
    ("reply_to_email", "audience", 51017),
    ("send_email", "language", 51017),
    ("reply_to_email", "language", 51017),
    ("forward_email", "language", 51017),
    ("send_draft", "language", 51017),
    ("save_draft", "account", 53001),
    ("update_draft", "account", 53001),
    ("save_draft", "answeredEmailId", 51004),
    ("update_draft", "answeredEmailId", 51004),
    ("update_draft", "draftId", 53008),
    ("delete_draft", "draftId", 53008),
    ("send_draft", "draftId", 53008),
    # No such text is an instant with an offset: refused by the use case, naming the field.
    ("send_draft", "sendAfter", 51013),
    ("set_mail_flags", "storedEmailId", 51004),
    ("set_mail_flags", "keywordChange", 51017),
    ("organize_email", "action", 51017),
    # A draft's answering is published as an enumeration and refused by its use case, as the
    # drafting contract says (51013).
    ("save_draft", "answering", 51013),
    ("update_draft", "answering", 51013),
    # The contact book: an origin is published as an enumeration and refused by its use
    # case (51009); such text is no contact identifier, no address and no cursor.
    ("list_contacts", "origin", 51009),
    ("list_contacts", "cursor", 52003),
    ("get_contact", "contactId", 51010),
    ("get_contact", "address", 51010),
    ("update_contact", "contactId", 51010),
    ("delete_contact", "contactId", 51010),
    ("promote_contact", "contactId", 51010),
    ("create_contact", "preferredAddress", 51011),
    ("update_contact", "preferredAddress", 51011),
]
# ... refused as the one entry of a list, ...
LISTED = [
    ("list_emails", "accounts", 53001),
    ("search_emails", "accounts", 53001),
    ("get_email_content", "storedEmailIds", 51004),
    ("organize_email", "storedEmailIds", 51004),
    ("send_email", "to", 51013),
    ("send_email", "cc", 51013),
    ("send_email", "bcc", 51013),
    ("reply_to_email", "cc", 51013),
    ("forward_email", "to", 51013),
    ("forward_email", "cc", 51013),
    ("forward_email", "bcc", 51013),
    ("save_draft", "to", 51013),
    ("save_draft", "cc", 51013),
    ("save_draft", "bcc", 51013),
    ("update_draft", "to", 51013),
    ("update_draft", "cc", 51013),
    ("update_draft", "bcc", 51013),
    # A file is named by an object: text is no reference, whatever it reads as.
    ("save_draft", "attachments", 51017),
    ("update_draft", "attachments", 51017),
    ("create_contact", "addresses", 51011),
    ("update_contact", "addresses", 51011),
]
FOLDERS = [("list_emails", "folders"), ("search_emails", "folders")]
# ... a filter matched against the stored mail, ...
FILTERED = [
    ("list_emails", "subjectFragment"),
    ("search_emails", "subjectFragment"),
    ("list_emails", "keyword"),
    ("search_emails", "keyword"),
    ("search_emails", "queryText"),
]
# ... a received or sent bound, which no such text is, ...
BOUNDS = [
    ("list_emails", "receivedOnOrAfter"),
    ("list_emails", "receivedBefore"),
    ("search_emails", "receivedOnOrAfter"),
    ("search_emails", "receivedBefore"),
    ("list_emails", "sentOnOrAfter"),
    ("list_emails", "sentBefore"),
    ("search_emails", "sentOnOrAfter"),
    ("search_emails", "sentBefore"),
]
# ... part of the message sent, ...
CARRIED = [
    ("send_email", "subject"),
    ("send_email", "plainTextBody"),
    ("send_email", "htmlBody"),
    ("reply_to_email", "plainTextBody"),
    ("reply_to_email", "htmlBody"),
    ("forward_email", "plainTextBody"),
    ("forward_email", "htmlBody"),
    # A draft carries it, and send_draft sends exactly that.
    ("save_draft", "subject"),
    ("save_draft", "plainTextBody"),
    ("save_draft", "htmlBody"),
    ("update_draft", "subject"),
    ("update_draft", "plainTextBody"),
    ("update_draft", "htmlBody"),
]
DRAFTING = {"save_draft", "update_draft"}
# ... or the key naming it.
KEYED = [("send_email", "idempotencyKey"), ("reply_to_email", "idempotencyKey")]
KEYED += [("forward_email", "idempotencyKey")]
# A keyword is taken as the text given: an IMAP atom is written down, anything else refused.
FLAG_KEYWORDS = [("set_mail_flags", "keywords"), ("organize_email", "keywords")]
REQUESTS = [("set_mail_flags", "requestId"), ("organize_email", "requestId")]
# A folder to move to is named by its alias: such text names none.
DESTINATIONS = [("organize_email", "folder")]
# createFolder's own: the name is the folder's, the account and parent name nothing.
CREATED = [("organize_email", "name"), ("organize_email", "account"), ("organize_email", "parent")]
# A contact's name and note are recorded as the text given, and the book is searched for it.
RECORDED = [
    ("create_contact", "displayName"),
    ("create_contact", "note"),
    ("update_contact", "displayName"),
    ("update_contact", "note"),
]
SEARCHED = [("list_contacts", "search")]
# A pattern is the regular expression written: "[]" is none, the others match themselves.
PATTERNS = [("search_emails", "matchPattern")]
# A body fragment is the text written: no body here carries any of these.
CONTAINED = [("list_emails", "contains")]
PINNED = Path(__file__).with_name("descriptor.json")


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument", "expected"), REFUSED)
def test_text_that_reads_as_json_is_refused_for_what_it_says(
    literal: LiteralDeployment, tool: str, argument: str, expected: int, text: str
) -> None:
    assert code(call_with(literal, tool, **{argument: text})) == expected


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument", "expected"), LISTED)
def test_a_list_entry_that_reads_as_json_is_refused_for_what_it_says(
    literal: LiteralDeployment, tool: str, argument: str, expected: int, text: str
) -> None:
    assert code(call_with(literal, tool, **{argument: [text]})) == expected


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("tool", sorted(DRAFTING))
def test_text_inside_a_file_reference_is_read_as_written(
    literal: LiteralDeployment, tool: str, text: str
) -> None:
    """Text naming the email of a file reference is that text, never what it reads as as
    JSON: "null" is no omitted field (which would be half a reference, 51018) but text that
    is no identifier (51004)."""
    reference = {"storedEmailId": text, "partId": "2"}
    assert code(call_with(literal, tool, attachments=[reference])) == 51004


def _subjects(result: Any) -> list[str]:
    answer = structured(result)
    entries = answer.get("emails", answer.get("matches", []))
    return sorted(e.get("summary", e)["subject"] for e in entries)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument"), FILTERED)
def test_a_text_filter_applies_literally(
    literal: LiteralDeployment, tool: str, argument: str, text: str
) -> None:
    result = call_with(literal, tool, **{argument: text})
    if argument == "keyword" and text not in KEYWORDS:
        assert code(result) == 51002
    elif argument == "queryText" and not text.isalnum():
        # Punctuation alone is no word to match: found nowhere, and not refused.
        assert _subjects(result) == []
    else:
        assert _subjects(result) == [subject_of(text)]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument"), PATTERNS)
def test_a_pattern_is_the_expression_written(
    literal: LiteralDeployment, tool: str, argument: str, text: str
) -> None:
    result = call_with(literal, tool, **{argument: text})
    if text == "[]":
        assert code(result) == 51002
    else:
        assert subject_of(text) in _subjects(result)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument"), CONTAINED)
def test_a_body_fragment_is_the_text_written(
    literal: LiteralDeployment, tool: str, argument: str, text: str
) -> None:
    """Read as JSON, "null" would filter nothing and "[]" would be refused; as text, no
    body of the mailbox carries it."""
    result = call_with(literal, tool, **{argument: text})
    assert _subjects(result) == []
    assert structured(result)["containsScan"]["cut"] is False


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument"), FOLDERS)
def test_a_folder_named_by_text_that_reads_as_json_names_no_folder(
    literal: LiteralDeployment, tool: str, argument: str, text: str
) -> None:
    assert _subjects(call_with(literal, tool, **{argument: [text]})) == []


@pytest.mark.parametrize(
    "value",
    [
        *TEXTS,
        pytest.param(1, id="number"),
        pytest.param(1777626000, id="seconds"),
        pytest.param("1777626000.5", id="seconds-text"),
    ],
)
@pytest.mark.parametrize(("tool", "argument"), BOUNDS)
def test_a_time_bound_that_is_no_date_time_is_refused(
    literal: LiteralDeployment, tool: str, argument: str, value: object
) -> None:
    """A number, given as such or as text, is not read as seconds since the epoch."""
    assert code(call_with(literal, tool, **{argument: value})) == 51017


def _recipient(arguments: dict[str, Any]) -> str:
    return str((arguments.get("to") or arguments["cc"])[0])


def _received(d: LiteralDeployment, recipients: list[str]) -> dict[str, Received]:
    """What the test SMTP server holds for each recipient, once it holds something for each
    (or a minute has passed)."""
    deadline = time.monotonic() + 60
    while True:
        found = {r: m for m in d.smtp.received() for r in m.rcpt_tos if r in recipients}
        if len(found) == len(recipients) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _part(raw: bytes, subtype: str) -> str:
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    part = parsed.get_body(preferencelist=(subtype,))
    assert part is not None
    assert part.get_content_subtype() == subtype
    return str(part.get_content())


@pytest.mark.parametrize(("tool", "argument"), CARRIED)
def test_a_message_carries_the_text_given(
    literal: LiteralDeployment, tool: str, argument: str
) -> None:
    sent: dict[str, str] = {}
    for text in TEXTS:
        arguments = {**BASE[tool](literal), argument: text}
        result = call(literal.url, KEY, tool, arguments)
        assert code(result) is None
        if tool in DRAFTING:
            draft = {"draftId": structured(result)["draftId"]}
            assert code(call(literal.url, KEY, "send_draft", draft)) is None
        sent[_recipient(arguments)] = text
    received = _received(literal, list(sent))
    assert set(received) == set(sent)
    for recipient, text in sent.items():
        raw = received[recipient].content
        if argument == "subject":
            parsed = email.message_from_bytes(raw, policy=email.policy.default)
            assert parsed["Subject"] == text
        elif argument == "plainTextBody":
            assert _part(raw, "plain").splitlines()[0] == text
        else:
            assert _part(raw, "html").strip().startswith(text)


@pytest.mark.parametrize("text", TEXTS)
def test_an_idempotency_key_is_the_text_given(literal: LiteralDeployment, text: str) -> None:
    """A key names one message per account whichever tool is given it: each repeat of the
    text answers the first send's record."""
    first = structured(call_with(literal, "send_email", idempotencyKey=text))
    for tool, _ in KEYED:
        again = structured(call_with(literal, tool, idempotencyKey=text))
        assert again["outgoingEmailId"] == first["outgoingEmailId"]


@pytest.mark.parametrize("text", TEXTS)
def test_a_keyword_is_the_text_given(literal: LiteralDeployment, text: str) -> None:
    result = call_with(literal, "set_mail_flags", keywords=[text])
    if text in KEYWORDS:
        assert [c["change"] for c in structured(result)["recordedChanges"]] == ["remove-keywords"]
    else:
        assert code(result) == 51012


@pytest.mark.parametrize("text", TEXTS)
def test_a_request_identity_is_the_text_given(literal: LiteralDeployment, text: str) -> None:
    """The same text names the same request: the retry answers the first call's record."""
    first = structured(call_with(literal, "set_mail_flags", requestId=text))
    again = structured(call_with(literal, "set_mail_flags", requestId=text))
    named = [c["changeRecordId"] for c in first["recordedChanges"]]
    assert [c["changeRecordId"] for c in again["recordedChanges"]] == named


@pytest.mark.parametrize("text", TEXTS)
def test_a_keyword_to_label_with_is_the_text_given(literal: LiteralDeployment, text: str) -> None:
    result = call_with(literal, "organize_email", keywords=[text])
    if text in KEYWORDS:
        assert [c["change"] for c in structured(result)["changed"]] == ["remove-keywords"]
    else:
        assert code(result) == 51020


@pytest.mark.parametrize("text", TEXTS)
def test_an_organizing_request_identity_is_the_text_given(
    literal: LiteralDeployment, text: str
) -> None:
    first = structured(call_with(literal, "organize_email", requestId=text))
    again = structured(call_with(literal, "organize_email", requestId=text))
    named = [c["changeRecordId"] for c in first["changed"]]
    assert [c["changeRecordId"] for c in again["changed"]] == named


@pytest.mark.parametrize("text", TEXTS)
def test_a_folder_to_move_to_named_by_json_text_names_no_folder(
    literal: LiteralDeployment, text: str
) -> None:
    moved = call_with(literal, "organize_email", action="move", keywords=None, folder=text)
    assert code(moved) == 53012


def test_over_stdio_text_filters_apply_literally(literal: LiteralDeployment) -> None:
    async def work(client: Client) -> list[list[str]]:
        return [
            _subjects(await client.call_tool("list_emails", {"subjectFragment": text}))
            for text in TEXTS
        ]

    log = literal.config_path.parent / "stdio.log"
    found = over_stdio(literal.config_path, literal.env, work, log)
    assert found == [[subject_of(text)] for text in TEXTS]


def test_json_text_given_where_no_text_is_accepted_is_still_read_as_json(
    literal: LiteralDeployment,
) -> None:
    """No text is a valid number, boolean or list, so such text is read as what it spells,
    as it always was: the way a client that encodes its arguments twice is understood."""
    assert len(structured(call_with(literal, "list_emails", pageSize="2"))["emails"]) == 2
    unseen = call_with(literal, "list_emails", isRemotelySeen="false")
    assert len(_subjects(unseen)) == len(TEXTS) + 1
    named = call_with(literal, "list_emails", accounts='["work"]', subjectFragment="null")
    assert _subjects(named) == [subject_of("null")]


@pytest.mark.parametrize("text", TEXTS)
def test_a_folder_asked_for_under_json_text_is_named_by_that_text(
    literal: LiteralDeployment, text: str
) -> None:
    def create(**arguments: Any) -> Any:
        return call(literal.url, KEY, "organize_email", {"action": "createFolder", **arguments})

    # Before the folder of that name is asked for (and created by the running server).
    assert code(create(account="work", name="Elsewhere", parent=text)) == 53012
    assert code(create(account=text, name="Elsewhere")) == 53001
    created = structured(create(account="work", name=text, requestId=f"literal-{text}"))
    assert (created["folder"]["alias"], created["folder"]["parentAlias"]) == (text, None)


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize(("tool", "argument"), RECORDED)
def test_a_contact_records_the_text_given(
    literal: LiteralDeployment, tool: str, argument: str, text: str
) -> None:
    written = structured(call_with(literal, tool, **{argument: text}))
    assert written["state"] == "written"
    recorded = written["contact"]
    assert recorded["displayName" if argument == "displayName" else "note"] == text
    again = structured(call_with(literal, "get_contact", contactId=recorded["contactId"]))
    assert again["contact"] == recorded


@pytest.mark.parametrize("text", TEXTS)
def test_the_book_is_searched_for_the_text_given(literal: LiteralDeployment, text: str) -> None:
    """Text read as JSON would be no search at all and list everybody."""
    person = structured(call_with(literal, "create_contact", displayName=f"Literal {text} Name"))
    found = structured(call_with(literal, "list_contacts", search=text, pageSize=200))
    assert person["contact"] in found["contacts"]
    for contact in found["contacts"]:
        held = [contact["displayName"], *contact["addresses"]]
        assert any(text.casefold() in value.casefold() for value in held)


def _admits_text(schema: dict[str, Any]) -> bool:
    branches = schema.get("anyOf", [schema])
    return any(b.get("type") == "string" or "items" in b or "enum" in b for b in branches)


def test_every_text_argument_of_every_published_tool_is_exercised() -> None:
    published = {
        (tool["name"], name)
        for tool in json.loads(PINNED.read_text("utf-8"))
        for name, schema in tool["inputSchema"]["properties"].items()
        if _admits_text(schema)
    }
    exercised = {(tool, argument) for tool, argument, _ in REFUSED + LISTED}
    exercised |= set(FOLDERS + FILTERED + BOUNDS + CARRIED + KEYED + FLAG_KEYWORDS + REQUESTS)
    exercised |= set(DESTINATIONS + CREATED + RECORDED + SEARCHED + PATTERNS + CONTAINED)
    assert exercised == published
