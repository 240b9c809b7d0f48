"""The sending tools over Streamable HTTP with the official client: every refusal code they
can produce, idempotency under twenty concurrent calls, and a withdrawal that never races the
delivery pass."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from log_audit import register_all
from mcp_tests.client import UNKNOWN_TOOL, call, code, over_http, refusal, structured, text
from servers.smtp import SmtpServer
from waiting import wait_for

from .helpers import SMTP_PASSWORD, SMTP_USER
from .served import KEYS, Served, incoming, relaxed_config, serve, strict_config

SUBJECT = "Lunch on Thursday"
ANSWERED = "Question about the invoice"
BODY = "Shall we meet at noon by the fountain?\n"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def relaxed(smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("relaxed")
    register_all([ANSWERED, "olga@example.net", "Olga Writer"])
    mail = {name: incoming(ANSWERED, f"{name}@example.org") for name in ("work", "quiet", "bare")}
    yield from serve(root, relaxed_config(root, smtp), smtp, deliver=True, mail=mail)


@pytest.fixture(scope="module")
def strict(smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("strict")
    yield from serve(root, strict_config(root, smtp), smtp, deliver=True)


def _send(**overrides: Any) -> dict[str, Any]:
    register_all([SUBJECT, BODY, "friend@example.net", "someone@blocked.example"])
    arguments: dict[str, Any] = {
        "account": "work",
        "to": ["friend@example.net"],
        "subject": SUBJECT,
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }
    arguments.update(overrides)
    return arguments


def _code(served: Served, tool: str, arguments: dict[str, Any], key: str = "agent") -> int | None:
    return code(call(served.url, KEYS[key], tool, arguments))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"idempotencyKey": "  "}, 51013),
        ({"idempotencyKey": "k" * 129}, 51013),
        ({"idempotencyKey": "bad\x07key"}, 51013),
        ({"account": ""}, 51013),
        ({"account": "a" * 257}, 51013),
        ({"account": "work\n"}, 51013),
        ({"to": ["Friend <friend@example.net>"]}, 51013),
        ({"to": ["frïend@example.net"]}, 51013),
        ({"to": ["friend@example.net\r\nBcc: x@example.net"]}, 51013),
        ({"to": [], "cc": None}, 51013),
        ({"subject": "two\nlines"}, 51013),
        ({"htmlBody": "   "}, 51013),
        (
            {"to": ["a@example.net", "b@example.net"], "cc": ["c@example.net", "d@example.net"]},
            51014,
        ),
        ({"plainTextBody": "x" * 2001}, 51014),
        ({"to": [f"p{i}@example.net" for i in range(501)]}, 51014),
        ({"account": "nobody"}, 53001),
        ({"to": ["someone@blocked.example"]}, 53006),
        ({"to": ["someone@mail.blocked.example"]}, 53006),
        ({"account": "bare"}, 56002),
        ({"account": "quiet"}, 56003),
    ],
)
def test_send_email_refuses_with_the_contract_codes(
    relaxed: Served, overrides: dict[str, Any], expected: int
) -> None:
    assert _code(relaxed, "send_email", _send(**overrides)) == expected


def test_a_send_is_answered_queued_and_read_back_by_its_own_caller_only(relaxed: Served) -> None:
    arguments = _send(cc=["friend@example.net", "pal@example.net"], bcc=["hidden@example.net"])
    result = call(relaxed.url, KEYS["agent"], "send_email", arguments)
    assert code(result) is None
    answer = structured(result)
    assert answer["state"] == "queued"
    assert answer["accountId"] == "work"
    assert answer["recipientCount"] == 3
    assert set(answer) == {
        "outgoingEmailId",
        "accountId",
        "state",
        "recipientCount",
        "queuedAt",
        "sendAfter",
        "status",
        "sent",
        "draftId",
        "reason",
    }
    # send_email schedules nothing: the shape it shares with send_draft names no instant.
    assert (
        answer["status"],
        answer["sent"],
        answer["draftId"],
        answer["reason"],
        answer["sendAfter"],
    ) == ("queued", False, None, None, None)
    # The same key again: the same record, nothing more queued.
    again = structured(call(relaxed.url, KEYS["agent"], "send_email", arguments))
    assert again == answer

    identifier = answer["outgoingEmailId"]
    status = structured(
        call(relaxed.url, KEYS["agent"], "get_outgoing_email", {"outgoingEmailId": identifier})
    )
    assert status["state"] == "queued"
    assert status["attemptCount"] == 0
    assert status["failureCode"] is None
    assert [(r["field"], r["address"], r["state"]) for r in status["recipients"]] == [
        ("to", "friend@example.net", "pending"),
        ("cc", "pal@example.net", "pending"),
        ("bcc", "hidden@example.net", "pending"),
    ]
    for tool in ("get_outgoing_email", "cancel_outgoing_email"):
        assert _code(relaxed, tool, {"outgoingEmailId": identifier}, key="sendonly") == 53007


@pytest.mark.parametrize("tool", ["get_outgoing_email", "cancel_outgoing_email"])
@pytest.mark.parametrize(
    ("identifier", "expected"),
    [
        ("", 51016),
        ("not-an-id", 51016),
        (str(uuid.UUID(int=0)), 51016),
        # A well-formed identifier of no send, the same in every collecting process.
        (str(uuid.uuid5(uuid.NAMESPACE_URL, "https://mailfathom.invalid/no-send")), 53007),
    ],
)
def test_naming_a_send_refuses_text_and_strangers_apart(
    relaxed: Served, tool: str, identifier: str, expected: int
) -> None:
    assert _code(relaxed, tool, {"outgoingEmailId": identifier}) == expected


def test_a_waiting_send_is_withdrawn_once_and_answered_alike_twice(relaxed: Served) -> None:
    answer = structured(call(relaxed.url, KEYS["agent"], "send_email", _send()))
    arguments = {"outgoingEmailId": answer["outgoingEmailId"]}
    first = call(relaxed.url, KEYS["agent"], "cancel_outgoing_email", arguments)
    assert code(first) is None
    assert structured(first)["state"] == "cancelled"
    second = call(relaxed.url, KEYS["agent"], "cancel_outgoing_email", arguments)
    assert structured(second) == structured(first)


def test_a_reader_is_not_offered_the_sending_tools_and_they_answer_as_unknown(
    relaxed: Served,
) -> None:
    hidden = refusal(relaxed.url, KEYS["reader"], "send_email", _send())
    unknown = refusal(relaxed.url, KEYS["reader"], "no_such_tool", {})
    assert hidden == unknown == UNKNOWN_TOOL


def _wait_for_state(served: Served, identifier: str, state: str) -> dict[str, Any]:
    def status() -> dict[str, Any] | None:
        found = structured(
            call(served.url, KEYS["agent"], "get_outgoing_email", {"outgoingEmailId": identifier})
        )
        return found if found["state"] == state else None

    return wait_for(status, "the send did not reach the awaited state", interval=0.5)


def _received_subjects(smtp: SmtpServer, subject: str) -> int:
    return sum(1 for r in smtp.received() if subject.encode() in r.content)


def test_twenty_concurrent_identical_calls_queue_one_send_and_transmit_it_once(
    strict: Served, smtp: SmtpServer
) -> None:
    subject = f"Concurrent {uuid.uuid4().hex[:8]}"
    register_all([subject])
    arguments = _send(to=["colleague@example.net"], subject=subject, idempotencyKey="same")

    async def work(client: Client) -> list[dict[str, Any]]:
        answers: list[dict[str, Any]] = []

        async def one() -> None:
            answers.append(structured(await client.call_tool("send_email", arguments)))

        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(one)
        return answers

    answers = over_http(strict.url, KEYS["agent"], work)
    assert len(answers) == 20
    assert len({a["outgoingEmailId"] for a in answers}) == 1
    status = _wait_for_state(strict, answers[0]["outgoingEmailId"], "sent")
    assert status["state"] == "sent"
    assert status["attemptCount"] == 1
    assert [(r["state"], r["lastReplyCode"]) for r in status["recipients"]] == [("accepted", 250)]
    # A send queued after it is transmitted by a later delivery pass; by then that pass has
    # looked at the queue again, and the message is still on the server once.
    later = f"Later {uuid.uuid4().hex[:8]}"
    register_all([later])
    queued = _send(to=["colleague@example.net"], subject=later)
    assert _code(strict, "send_email", queued, key="sendonly") is None
    wait_for(lambda: _received_subjects(smtp, later), "the later send was not transmitted")
    assert _received_subjects(smtp, subject) == 1
    # Transmitted: withdrawing it is refused and changes nothing.
    refused = call(
        strict.url,
        KEYS["agent"],
        "cancel_outgoing_email",
        {"outgoingEmailId": answers[0]["outgoingEmailId"]},
    )
    assert code(refused) == 58001


def test_an_unvouched_address_and_a_spent_ceiling_are_refused(strict: Served) -> None:
    assert _code(strict, "send_email", _send(to=["stranger@example.net"])) == 53009
    # A vouched address goes through until this client's hourly ceiling (3) is spent; the
    # concurrent test above queued one send under the same caller.
    outcomes: list[int | None] = []
    for _ in range(4):
        outcomes.append(_code(strict, "send_email", _send(to=["colleague@example.net"])))
        if outcomes[-1] is not None:
            break
    assert outcomes[-1] == 57002
    assert all(outcome is None for outcome in outcomes[:-1])
    # Another client has room of its own.
    assert _code(strict, "send_email", _send(to=["me@example.org"]), key="sendonly") is None


def _stored_email(served: Served, account: str) -> str:
    page = structured(
        call(
            served.url, KEYS["agent"], "list_emails", {"accounts": [account], "folders": ["INBOX"]}
        )
    )
    return str(page["emails"][0]["storedEmailId"])


def _reply(stored: str, **overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "storedEmailId": stored,
        "audience": "senderOnly",
        "plainTextBody": "Thank you, noted.",
        "idempotencyKey": uuid.uuid4().hex,
    }
    arguments.update(overrides)
    return arguments


def test_replies_and_forwards_refuse_with_the_contract_codes(relaxed: Served) -> None:
    work = _stored_email(relaxed, "work")
    cases: list[tuple[str, dict[str, Any], int | None, str]] = [
        ("reply_to_email", _reply(work), None, "agent"),
        ("reply_to_email", _reply("not-an-id"), 51004, "agent"),
        ("reply_to_email", _reply(str(uuid.UUID(int=0))), 51004, "agent"),
        ("reply_to_email", _reply(str(uuid.uuid4())), 53005, "agent"),
        ("reply_to_email", _reply(_stored_email(relaxed, "bare")), 56002, "agent"),
        ("reply_to_email", _reply(_stored_email(relaxed, "quiet")), 56003, "agent"),
        ("reply_to_email", _reply(work, idempotencyKey=""), 51013, "agent"),
        ("reply_to_email", _reply(work, cc=["bjørn@example.net"]), 51013, "agent"),
        ("reply_to_email", _reply(work, plainTextBody="x" * 2001), 51014, "agent"),
        ("reply_to_email", _reply(work, cc=["x@blocked.example"]), 53006, "agent"),
        ("forward_email", _forward(work), None, "agent"),
        ("forward_email", _forward(str(uuid.uuid4())), 53005, "agent"),
        ("forward_email", _forward("nope"), 51004, "agent"),
        ("forward_email", _forward(work, to=["a@blocked.example"]), 53006, "agent"),
        (
            "forward_email",
            _forward(work, to=["a@x.net", "b@x.net", "c@x.net", "d@x.net"]),
            51014,
            "agent",
        ),
    ]
    for tool, arguments, expected, key in cases:
        result = call(relaxed.url, KEYS[key], tool, arguments)
        assert code(result) == expected, (tool, arguments, key)
        if expected is None:
            assert structured(result)["state"] == "queued"
    # An answer quotes the email it answers: a caller granted sending without reading is not
    # offered the responses, and a call naming one is answered as a call naming no tool.
    for tool, arguments in (("reply_to_email", _reply(work)), ("forward_email", _forward(work))):
        hidden = refusal(relaxed.url, KEYS["sendonly"], tool, arguments)
        absent = refusal(relaxed.url, KEYS["sendonly"], tool + "_absent", arguments)
        assert hidden == absent == UNKNOWN_TOOL


def _forward(stored: str, **overrides: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "storedEmailId": stored,
        "to": ["pal@example.net"],
        "plainTextBody": "Have a look.",
        "idempotencyKey": uuid.uuid4().hex,
    }
    arguments.update(overrides)
    return arguments


# A word beside each refused character: registered with the log audit, and looked for in every
# answer and in the server's log.
_MARK = "Quokkaparade"


@pytest.mark.parametrize(
    "overrides",
    [
        {"subject": f"two\u2028{_MARK}"},
        {"subject": f"two\u2029{_MARK}"},
        {"subject": f"two\x85{_MARK}"},
        {"idempotencyKey": f"key\u2028{_MARK}"},
        {"account": f"work\u2029{_MARK}"},
    ],
)
def test_a_line_or_paragraph_separator_is_51013_over_http(
    relaxed: Served, overrides: dict[str, Any]
) -> None:
    register_all([_MARK])
    result = call(relaxed.url, KEYS["agent"], "send_email", _send(**overrides))
    assert code(result) == 51013
    assert _MARK not in text(result)


def test_a_lone_surrogate_reaching_a_tool_is_refused_with_the_arguments_code(
    relaxed: Served,
) -> None:
    """JSON text cannot carry a lone surrogate in a string (the parser refuses it), but a
    list written as JSON text inside a string is decoded by the SDK with a parser that
    accepts one, so these reach the use cases: each is refused with its own code, and
    nothing the caller wrote is repeated in the answer or in the server's log."""
    register_all([_MARK])
    lone = f'["{_MARK}\\udc80"]'
    cases: list[tuple[str, dict[str, Any], int]] = [
        ("list_emails", {"accounts": lone}, 51002),
        ("list_emails", {"folders": lone}, 51002),
        ("search_emails", {"queryText": "answer", "accounts": lone}, 51002),
        ("search_emails", {"queryText": "answer", "folders": lone}, 51002),
        ("get_email_content", {"storedEmailIds": lone}, 51004),
        ("send_email", _send(to=f'["{_MARK}\\udc80@example.net"]'), 51013),
        ("send_email", _send(cc=f'["{_MARK}\\udc80@example.net"]'), 51013),
        ("send_email", _send(bcc=f'["{_MARK}\\udc80@example.net"]'), 51013),
        ("forward_email", _forward(_stored_email(relaxed, "work"), to=lone), 51013),
        ("reply_to_email", _reply(_stored_email(relaxed, "work"), cc=lone), 51013),
    ]
    log_path = relaxed.data_dir.parent / "server.log"
    logged_before = log_path.stat().st_size
    for tool, arguments, expected in cases:
        result = call(relaxed.url, KEYS["agent"], tool, arguments)
        assert code(result) == expected, tool
        assert _MARK not in text(result)
    log = log_path.read_bytes()
    assert _MARK.encode() not in log
    assert b"tool.undiagnosed_failure" not in log[logged_before:]
