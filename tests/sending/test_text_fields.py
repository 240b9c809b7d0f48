"""Every string argument of every tool, at its use case: text that is no Unicode scalar value
(a lone surrogate) and the line and paragraph separators are refused with the argument's own
code, before anything is read or written, and no refusal repeats what was refused."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import pytest

from log_audit import register_all
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.sending.forward_email import ForwardRequest
from mailfathom.app.sending.reply_to_email import ReplyRequest
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

from .helpers import AGENT, SendingDeployment
from .helpers import open_deployment as _open

LONE = "\udc80"
# A word beside each refused character, registered with the log audit and looked for in
# every refusal: nothing the caller wrote is repeated.
MARK = "Zebrafish"
SEPARATORS = ["\u2028", "\u2029", "\x85"]
SUBJECT = "Harbour inspection notes"


@dataclass
class Held:
    d: SendingDeployment
    stored_email_id: str


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Held]:
    register_all([MARK, SUBJECT, "inspector@example.net", "friend@example.net"])
    with pytest.MonkeyPatch.context() as patch:
        for d in _open(tmp_path_factory.mktemp("text"), None, patch):
            incoming = EmailMessage()
            incoming["From"] = "inspector@example.net"
            incoming["To"] = "me@example.org"
            incoming["Subject"] = SUBJECT
            incoming["Message-ID"] = "<text-fields-1@example.net>"
            incoming.set_content("The east pier needs attention.\n")
            d.services.connectors.local.folder("work", "INBOX").deliver(bytes(incoming))
            account = d.services.config.account("work")
            assert account is not None
            d.services.account_synchronizer().run_once(account)
            page = d.services.reading().timeline.read(AGENT, TimelineRequest(SelectionInput()))
            (email,) = page.emails
            yield Held(d, str(email.stored_email_id))


def _refused(work: Callable[[], object], bad: str) -> int:
    with pytest.raises(Refusal) as caught:
        work()
    message = caught.value.message
    assert message.encode("utf-8")  # no lone surrogate in an answer a client reads
    assert bad not in message
    assert MARK not in message
    return caught.value.code


# -- reading -------------------------------------------------------------------------------

_SELECTIONS: list[tuple[str, str, Code]] = [
    ("accounts", f"work{LONE}{MARK}", Code.FILTER_NOT_ACCEPTED),
    ("folders", f"INBOX{LONE}{MARK}", Code.FILTER_NOT_ACCEPTED),
    ("folders", f"role:{LONE}{MARK}", Code.FILTER_NOT_ACCEPTED),
    ("sender_address", f"{MARK}{LONE}@example.net", Code.FILTER_NOT_ACCEPTED),
    ("recipient_address", f"{MARK}{LONE}@example.net", Code.FILTER_NOT_ACCEPTED),
    ("subject_fragment", f"{MARK}{LONE}", Code.FILTER_NOT_ACCEPTED),
    ("keyword", f"{MARK}{LONE}", Code.FILTER_NOT_ACCEPTED),
]
_SELECTIONS += [
    (field, f"{MARK}{separator}x", Code.FILTER_NOT_ACCEPTED)
    for field in ("accounts", "folders", "subject_fragment")
    for separator in SEPARATORS
]


def _selection(field: str, value: str) -> SelectionInput:
    listed = field in ("accounts", "folders")
    fields: dict[str, Any] = {field: [value] if listed else value}
    return SelectionInput(**fields)


@pytest.mark.parametrize(("field", "value", "expected"), _SELECTIONS)
def test_a_listing_refuses_a_filter_that_is_no_text_with_its_code(
    held: Held, field: str, value: str, expected: Code
) -> None:
    request = TimelineRequest(_selection(field, value))
    reading = held.d.services.reading()
    assert _refused(lambda: reading.timeline.read(AGENT, request), value) == expected


@pytest.mark.parametrize(("field", "value", "expected"), _SELECTIONS)
def test_a_search_refuses_a_filter_that_is_no_text_with_its_code(
    held: Held, field: str, value: str, expected: Code
) -> None:
    request = SearchRequest("pier", _selection(field, value))
    reading = held.d.services.reading()
    assert _refused(lambda: reading.search.search(AGENT, request), value) == expected


@pytest.mark.parametrize("query", [f"pier {MARK}{LONE}", *(f"pier{s}{MARK}" for s in SEPARATORS)])
def test_a_search_query_that_is_no_text_is_51002(held: Held, query: str) -> None:
    request = SearchRequest(query, SelectionInput())
    reading = held.d.services.reading()
    assert _refused(lambda: reading.search.search(AGENT, request), query) == 51002


def test_a_cursor_that_is_no_text_is_one_not_issued_here(held: Held) -> None:
    cursor = f"{MARK}{LONE}"
    request = TimelineRequest(SelectionInput(), cursor=cursor)
    reading = held.d.services.reading()
    assert _refused(lambda: reading.timeline.read(AGENT, request), cursor) == 52001


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        (ContentRequest(stored_email_ids=[LONE]), 51004),
        (ContentRequest(stored_email_ids=[f"{'0' * 31}1{LONE}"]), 51004),
        (ContentRequest(thread_id=LONE), 51008),
    ],
)
def test_a_content_read_naming_no_text_refuses_the_identifier(
    held: Held, request_: ContentRequest, expected: int
) -> None:
    reading = held.d.services.reading()
    bad = str(request_.thread_id or next(iter(request_.stored_email_ids or [])))
    assert _refused(lambda: reading.content.read(AGENT, request_), bad) == expected


@pytest.mark.parametrize("tool", ["read", "cancel"])
def test_an_outgoing_identifier_that_is_no_text_is_51016(held: Held, tool: str) -> None:
    sending = held.d.services.sending()
    work = {"read": sending.outgoing.read, "cancel": sending.cancellation.cancel}[tool]
    assert _refused(lambda: work(AGENT, LONE), LONE) == 51016


# -- sending -------------------------------------------------------------------------------


def _send(**changes: Any) -> SendRequest:
    request = SendRequest(
        account="work",
        to=["friend@example.net"],
        subject="Minutes",
        plain_text_body="Attached below.\n",
        idempotency_key="text-fields",
    )
    return dataclasses.replace(request, **changes)


_SEND_FIELDS: list[dict[str, Any]] = [
    {"account": f"work{LONE}{MARK}"},
    {"to": [f"{MARK}{LONE}@example.net"]},
    {"cc": [f"{MARK}{LONE}@example.net"]},
    {"bcc": [f"{MARK}{LONE}@example.net"]},
    {"subject": f"{MARK}{LONE}"},
    {"plain_text_body": f"{MARK}{LONE}\n"},
    {"html_body": f"<p>{MARK}{LONE}</p>"},
    {"idempotency_key": f"{MARK}{LONE}"},
]
_SEND_FIELDS += [
    {field: f"{prefix}{separator}{MARK}"}
    for field, prefix in (("subject", "Minutes"), ("idempotency_key", "k"), ("account", "work"))
    for separator in SEPARATORS
]


def _name(changes: dict[str, Any]) -> str:
    (field,) = changes
    return f"{field}-{_bad(changes)}"


def _bad(changes: dict[str, Any]) -> str:
    (value,) = changes.values()
    return str(value[0] if isinstance(value, (list, tuple)) else value)


def _records(held: Held) -> int:
    return len(held.d.services.outbox().listing(1000))


@pytest.mark.parametrize("changes", _SEND_FIELDS, ids=_name)
def test_a_send_refuses_a_field_that_is_no_text_before_anything_is_written(
    held: Held, changes: dict[str, Any]
) -> None:
    sending = held.d.services.sending()
    before = _records(held)
    code = _refused(lambda: sending.send.send(AGENT, _send(**changes)), _bad(changes))
    assert code == Code.MESSAGE_FIELD_NOT_COMPOSABLE
    assert _records(held) == before


_RESPONSE_FIELDS: list[dict[str, Any]] = [
    {"cc": [f"{MARK}{LONE}@example.net"]},
    {"plain_text_body": f"{MARK}{LONE}\n"},
    {"html_body": f"<p>{MARK}{LONE}</p>"},
    {"idempotency_key": f"{MARK}{LONE}"},
    *({"idempotency_key": f"k{s}{MARK}"} for s in SEPARATORS),
]


@pytest.mark.parametrize("changes", _RESPONSE_FIELDS, ids=_name)
def test_a_reply_refuses_a_field_that_is_no_text_before_anything_is_written(
    held: Held, changes: dict[str, Any]
) -> None:
    responses = held.d.services.sending().replies
    request = ReplyRequest(held.stored_email_id, False, "Noted.\n", "reply-text-fields")
    request = dataclasses.replace(request, **changes)
    before = _records(held)
    code = _refused(lambda: responses.reply(AGENT, request), _bad(changes))
    assert code == Code.MESSAGE_FIELD_NOT_COMPOSABLE
    assert _records(held) == before


@pytest.mark.parametrize(
    "changes",
    [
        *_RESPONSE_FIELDS,
        {"to": [f"{MARK}{LONE}@example.net"]},
        {"bcc": [f"{MARK}{LONE}@example.net"]},
    ],
    ids=_name,
)
def test_a_forward_refuses_a_field_that_is_no_text_before_anything_is_written(
    held: Held, changes: dict[str, Any]
) -> None:
    responses = held.d.services.sending().forwards
    request = ForwardRequest(
        held.stored_email_id, ["friend@example.net"], "See below.\n", "forward-text-fields"
    )
    request = dataclasses.replace(request, **changes)
    before = _records(held)
    code = _refused(lambda: responses.forward(AGENT, request), _bad(changes))
    assert code == Code.MESSAGE_FIELD_NOT_COMPOSABLE
    assert _records(held) == before


@pytest.mark.parametrize("tool", ["reply", "forward"])
def test_an_answered_email_named_by_no_text_is_51004(held: Held, tool: str) -> None:
    sending = held.d.services.sending()
    work: Callable[[], object]
    if tool == "reply":
        work = lambda: sending.replies.reply(AGENT, ReplyRequest(LONE, False, "Noted.\n", "r"))  # noqa: E731
    else:
        work = lambda: sending.forwards.forward(  # noqa: E731
            AGENT, ForwardRequest(LONE, ["friend@example.net"], "See below.\n", "f")
        )
    assert _refused(work, LONE) == Code.NOT_AN_EMAIL_IDENTIFIER


def test_the_same_fields_without_the_refused_characters_are_sent(held: Held) -> None:
    """The refusals above are about the characters: the same request without them queues."""
    sending = held.d.services.sending()
    record = sending.send.send(
        AGENT, _send(subject=f"Minutes {MARK} \u00e9\u200d", idempotency_key="clean")
    )
    assert record.account_id == "work"
    responses = sending.replies
    reply = ReplyRequest(held.stored_email_id, False, "Noted.\u2028\n", "clean-reply")
    assert responses.reply(AGENT, reply).account_id == "work"
