"""A person's yes before mail leaves, over Streamable HTTP with the official client answering
through its elicitation callback, in both protocol generations (the question as the call's
`input_required` answer from 2026-07-28 on, as `elicitation/create` within the call before).

Every answer is tried in English, Czech and Slovak, and what it wrote is read back from the
store: the outbox, the owner alerts.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult

from log_audit import register_all
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.app.confirmation.confirmed_sending import alert_key
from mailfathom.app.confirmation.ports import OwnerAlert
from mailfathom.domain.drafts import Draft, DraftFile, DraftLife
from mcp_tests.client import code, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer
from sync.helpers import RemoteMailbox
from waiting import wait_for

# Person and choosing are imported from here by test_kept_send_repeats_http.py too.
from .asking import NO_CHOICE, NO_CHOICE_IDS, Answering
from .asking import Person as Person
from .asking import choosing as choosing
from .served import (
    ANSWERED_BODY,
    ANSWERED_SUBJECT,
    ATTACHED,
    KEYS,
    TIMEOUT_SECONDS,
    Served,
    open_connections,
    serve,
)

MODES = ["2026-07-28", "legacy"]
LANGUAGES = ["en", "cs", "sk"]
SUBJECT = "Dinner plans for Saturday"
BODY = "Shall we book the table by the window?\nSeven o'clock suits me.\n"
# The rows a person is shown, by language: (From, To, Cc, Bcc, Subject, Attachments).
ROWS = {
    "en": ("From", "To", "Cc", "Bcc", "Subject", "Attachments"),
    "cs": ("Od", "Komu", "Kopie", "Skrytá kopie", "Předmět", "Přílohy"),
    "sk": ("Od", "Komu", "Kópia", "Skrytá kópia", "Predmet", "Prílohy"),
}
CHOICES = {
    "en": ["Send", "Save draft", "Cancel"],
    "cs": ["Odeslat", "Uložit koncept", "Zrušit"],
    "sk": ["Odoslať", "Uložiť koncept", "Zrušiť"],
}


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def served(
    dovecot: DovecotServer, smtp: SmtpServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"confirm-{suffix}", f"pw-{suffix}")
    yield from serve(tmp_path_factory.mktemp("confirmation"), account, smtp)


def _send_arguments(language: str, **overrides: Any) -> dict[str, Any]:
    register_all([SUBJECT, BODY.splitlines()[0], "friend@example.org", "hidden@example.org"])
    arguments: dict[str, Any] = {
        "account": "work",
        "to": ["friend@example.org"],
        "bcc": ["hidden@example.org"],
        "subject": SUBJECT,
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
        "language": language,
    }
    arguments.update(overrides)
    return arguments


def _call(
    served: Served,
    tool: str,
    arguments: dict[str, Any],
    mode: str,
    person: Person | None,
    key: str = "asks",
    after: Callable[[], None] | None = None,
) -> CallToolResult:
    async def run() -> CallToolResult:
        headers = {"Authorization": f"Bearer {KEYS[key]}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(
                streamable_http_client(served.url, http_client=http),
                mode=mode,
                elicitation_callback=person,
            ) as client,
        ):
            result = await client.call_tool(tool, arguments)
            if after is not None:
                after()
            return result

    return anyio.run(run)


def _outbox_keys(served: Served) -> set[str]:
    with served.services() as services:
        return {entry.idempotency_key for entry in services.outbox().listing(1000)}


def _alert_count(served: Served) -> int:
    with served.services() as services:
        return len(services.alerts().listing(True, 1000))


def _alerts_of(served: Served, draft_id: str) -> list[OwnerAlert]:
    with served.services() as services:
        return [a for a in services.alerts().listing(True, 1000) if a.draft_id == draft_id]


def _draft(served: Served, draft_id: object) -> Draft:
    assert isinstance(draft_id, str)
    with served.services() as services:
        draft = SqlDraftStore(services.engine).find(uuid.UUID(draft_id))
    assert draft is not None
    assert draft.life is DraftLife.LIVE
    return draft


def _question_choices(params: ElicitRequestParams) -> list[tuple[str, str]]:
    schema = params.requested_schema  # type: ignore[union-attr]
    assert schema["required"] == ["choice"]
    assert list(schema["properties"]) == ["choice"]
    return [(o["const"], o["title"]) for o in schema["properties"]["choice"]["oneOf"]]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_send_queues_the_message_shown_after_one_question(
    served: Served, mode: str, language: str
) -> None:
    arguments = _send_arguments(language, cc=["pal@example.org"])
    person = Person(choosing("send"))
    answer = structured(_call(served, "send_email", arguments, mode, person))
    assert (answer["status"], answer["sent"], answer["state"]) == ("queued", False, "queued")
    assert answer["outgoingEmailId"] is not None
    assert arguments["idempotencyKey"] in _outbox_keys(served)

    [asked] = person.asked
    lines = asked.message.splitlines()
    sender, to, cc, bcc, subject, _ = ROWS[language]
    assert lines[2:7] == [
        f"{sender}: Owner Desk <owner@example.net>",
        f"{to}: friend@example.org",
        f"{cc}: pal@example.org",
        f"{bcc}: hidden@example.org",
        f"{subject}: {SUBJECT}",
    ]
    assert not any(line.startswith(ROWS[language][5] + ":") for line in lines)
    # The whole text, exactly as it is sent, closes the question.
    assert asked.message.endswith("\n" + BODY)
    assert _question_choices(asked) == list(
        zip(["send", "saveDraft", "cancel"], CHOICES[language], strict=True)
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_cancel_writes_nothing(served: Served, mode: str, language: str) -> None:
    arguments = _send_arguments(language)
    alerts = _alert_count(served)
    result = _call(served, "send_email", arguments, mode, Person(choosing("cancel")))
    answer = structured(result)
    assert (answer["status"], answer["sent"], answer["outgoingEmailId"]) == (
        "cancelled",
        False,
        None,
    )
    assert arguments["idempotencyKey"] not in _outbox_keys(served)
    assert _alert_count(served) == alerts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_save_draft_keeps_a_draft_and_sends_nothing(
    served: Served, mode: str, language: str
) -> None:
    arguments = _send_arguments(language)
    alerts = _alert_count(served)
    result = _call(served, "send_email", arguments, mode, Person(choosing("saveDraft")))
    answer = structured(result)
    assert (answer["status"], answer["sent"], answer["reason"]) == ("draft", False, None)
    assert answer["outgoingEmailId"] is None
    draft = _draft(served, answer["draftId"])
    assert [(r.field.value, r.address) for r in draft.recipients] == [
        ("to", "friend@example.org"),
        ("bcc", "hidden@example.org"),
    ]
    assert BODY.splitlines()[0].encode() in draft.mime
    assert arguments["idempotencyKey"] not in _outbox_keys(served)
    assert _alert_count(served) == alerts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    ("answer", "expected"),
    NO_CHOICE,
    ids=NO_CHOICE_IDS,
)
def test_an_answer_that_is_no_choice_sends_and_saves_nothing(
    served: Served, mode: str, language: str, answer: Answering, expected: int
) -> None:
    arguments = _send_arguments(language)
    alerts = _alert_count(served)
    assert code(_call(served, "send_email", arguments, mode, Person(answer))) == expected
    assert arguments["idempotencyKey"] not in _outbox_keys(served)
    assert _alert_count(served) == alerts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_no_answer_in_time_sends_and_saves_nothing(
    served: Served, mode: str, language: str
) -> None:
    arguments = _send_arguments(language)
    released = anyio.Event()

    async def too_late(params: ElicitRequestParams) -> ElicitResult:
        # Answer only once the deployment's time for an answer has passed (or, within the
        # call, once the server gave up and answered).
        deadline = time.monotonic() + TIMEOUT_SECONDS + 0.5
        with anyio.move_on_after(TIMEOUT_SECONDS * 10):
            while time.monotonic() < deadline and not released.is_set():
                await anyio.sleep(0.05)
            if mode == "legacy":
                await released.wait()
        return ElicitResult(action="accept", content={"choice": "send"})

    result = _call(served, "send_email", arguments, mode, Person(too_late), after=released.set)
    assert code(result) == 59002
    assert arguments["idempotencyKey"] not in _outbox_keys(served)


def _stored_email_id(served: Served, subject: str = ANSWERED_SUBJECT) -> str:
    result = _call(served, "list_emails", {"accounts": ["work"]}, "legacy", None, key="plain")
    [found] = [e for e in structured(result)["emails"] if e["subject"] == subject]
    return str(found["storedEmailId"])


@pytest.mark.parametrize("mode", MODES)
def test_no_mail_server_connection_is_open_while_the_person_decides(
    served: Served, mode: str
) -> None:
    stored = _stored_email_id(served)
    seen: list[tuple[int, int]] = []
    # The probe sees a connection when there is one.
    for port in (served.smtp_port, served.imap_port):

        def count(port: int = port) -> int:
            return open_connections(port)

        with socket.create_connection(("127.0.0.1", port)):
            wait_for(lambda: count() >= 1, "the probe saw the connection")
        wait_for(lambda: count() == 0, "the probe connection closed")

    async def look_then_send(params: ElicitRequestParams) -> ElicitResult:
        seen.append((open_connections(served.smtp_port), open_connections(served.imap_port)))
        return ElicitResult(action="accept", content={"choice": "send"})

    arguments = {
        "storedEmailId": stored,
        "to": ["friend@example.org"],
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
        "language": "cs",
    }
    person = Person(look_then_send)
    answer = structured(_call(served, "forward_email", arguments, mode, person))
    assert answer["status"] == "queued"
    assert seen == [(0, 0)]
    [asked] = person.asked
    assert f"Přílohy: {ATTACHED[0]} (2,9 KiB)" in asked.message.splitlines()
    assert ANSWERED_BODY in asked.message
    assert f"Předmět: Fwd: {ANSWERED_SUBJECT}" in asked.message.splitlines()


@pytest.mark.parametrize("mode", MODES)
def test_an_email_gone_between_question_and_answer_is_not_answered(
    served: Served, smtp: SmtpServer, mode: str
) -> None:
    # A message of its own, so moving it away leaves the other tests theirs.
    mailbox = RemoteMailbox(served.imap)
    try:
        mailbox.append(
            b"From: Petra Sender <petra@example.com>\r\nTo: owner@example.net\r\n"
            b"Subject: " + ANSWERED_SUBJECT.encode() + b" (moved)\r\n"
            b"Message-ID: <"
            + uuid.uuid4().hex.encode()
            + b"@example.com>\r\n\r\n"
            + ANSWERED_BODY.encode()
        )
    finally:
        mailbox.close()
    with served.services() as services:
        services.account_synchronizer().run_once(services.config.accounts[0])
    stored = _stored_email_id(served, ANSWERED_SUBJECT + " (moved)")

    async def move_it_then_send(params: ElicitRequestParams) -> ElicitResult:
        def move() -> None:
            remote = RemoteMailbox(served.imap)
            try:
                remote.conn.select("INBOX")
                typ, data = remote.conn.uid("SEARCH", "SUBJECT", '"(moved)"')
                assert typ == "OK"
                for uid in data[0].split():
                    remote.conn.uid("MOVE", uid.decode(), "Hidden")
            finally:
                remote.close()
            with served.services() as services:
                services.account_synchronizer().run_once(services.config.accounts[0])

        await anyio.to_thread.run_sync(move)
        return ElicitResult(action="accept", content={"choice": "send"})

    arguments = {
        "storedEmailId": stored,
        "audience": "senderOnly",
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }
    result = _call(served, "reply_to_email", arguments, mode, Person(move_it_then_send))
    assert code(result) == 53005
    assert arguments["idempotencyKey"] not in _outbox_keys(served)


def test_an_answer_sent_before_any_question_is_not_taken(served: Served) -> None:
    arguments = _send_arguments("en")
    person = Person(choosing("cancel"))

    async def run() -> CallToolResult:
        headers = {"Authorization": f"Bearer {KEYS['asks']}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(
                streamable_http_client(served.url, http_client=http),
                mode="2026-07-28",
                elicitation_callback=person,
            ) as client,
        ):
            forged = ElicitResult(action="accept", content={"choice": "send"})
            return await client.call_tool(
                "send_email", arguments, input_responses={"mailfathom.confirmation": forged}
            )

    answer = structured(anyio.run(run))
    # The question was put all the same, and its answer (Cancel) is what counted.
    assert len(person.asked) == 1
    assert answer["status"] == "cancelled"
    assert arguments["idempotencyKey"] not in _outbox_keys(served)


@pytest.mark.parametrize("mode", MODES)
def test_a_caller_asked_nothing_sends_without_a_question(served: Served, mode: str) -> None:
    arguments = _send_arguments("en")
    person = Person(choosing("cancel"))
    answer = structured(_call(served, "send_email", arguments, mode, person, key="plain"))
    assert (answer["status"], answer["state"]) == ("queued", "queued")
    assert person.asked == []
    assert arguments["idempotencyKey"] in _outbox_keys(served)


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_be_asked_gets_a_draft_and_the_owner_an_alert(
    served: Served, mode: str
) -> None:
    arguments = _send_arguments("sk")
    answer = structured(_call(served, "send_email", arguments, mode, None))
    assert (answer["status"], answer["sent"], answer["reason"]) == (
        "draft",
        False,
        "confirmation_unavailable",
    )
    draft = _draft(served, answer["draftId"])
    assert arguments["idempotencyKey"] not in _outbox_keys(served)
    with served.services() as services:
        [alert] = [
            a for a in services.alerts().listing(True, 1000) if a.draft_id == str(draft.draft_id)
        ]
    assert alert.key == alert_key(str(draft.draft_id))
    assert (alert.account_id, alert.reason) == ("work", "confirmation_unavailable")

    # The same call again: the same draft, and still one alert for it.
    again = structured(_call(served, "send_email", arguments, mode, None))
    assert again["draftId"] == answer["draftId"]
    with served.services() as services:
        alerts = [
            a for a in services.alerts().listing(True, 1000) if a.draft_id == str(draft.draft_id)
        ]
    assert len(alerts) == 1


def test_an_alert_that_cannot_be_recorded_fails_saying_the_draft_exists(
    dovecot: DovecotServer, smtp: SmtpServer, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"alerts-{suffix}", f"pw-{suffix}")
    for deployment in serve(tmp_path, account, smtp):
        with deployment.services() as services, services.engine.begin() as connection:
            connection.exec_driver_sql("DROP TABLE owner_alerts")
        arguments = _send_arguments("en")
        result = _call(deployment, "send_email", arguments, "2026-07-28", None)
        assert code(result) == 59005
        with deployment.services() as services, services.engine.connect() as connection:
            drafts = connection.exec_driver_sql("SELECT count(*) FROM drafts").scalar_one()
        assert drafts == 1
        assert arguments["idempotencyKey"] not in _outbox_keys(deployment)


def _saved_draft(served: Served, body: str) -> tuple[str, str]:
    """A new draft (a draft with the same words would be the same draft)."""
    body = f"{body}Reference {uuid.uuid4().hex[:8]}.\n"
    arguments = {
        "account": "work",
        "to": ["friend@example.org"],
        "subject": SUBJECT,
        "plainTextBody": body,
    }
    answer = structured(_call(served, "save_draft", arguments, "legacy", None, key="plain"))
    return str(answer["draftId"]), body


@pytest.mark.parametrize("mode", MODES)
def test_send_draft_asks_and_sends_the_revision_shown(served: Served, mode: str) -> None:
    draft_id, body = _saved_draft(served, BODY)
    person = Person(choosing("send"))
    answer = structured(
        _call(served, "send_draft", {"draftId": draft_id, "language": "cs"}, mode, person)
    )
    assert (answer["status"], answer["state"]) == ("queued", "queued")
    [asked] = person.asked
    assert asked.message.splitlines()[2:5] == [
        "Od: Owner Desk <owner@example.net>",
        "Komu: friend@example.org",
        f"Předmět: {SUBJECT}",
    ]
    assert asked.message.endswith("\n" + body)
    assert _draft_life(served, draft_id) is DraftLife.SENT


@pytest.mark.parametrize(
    ("mode", "language", "row"), [(MODES[0], "en", "Leaves after"), (MODES[1], "sk", "Odíde po")]
)
def test_send_draft_with_send_after_tells_the_person_when_it_leaves(
    served: Served, mode: str, language: str, row: str
) -> None:
    draft_id, _ = _saved_draft(served, BODY)
    instant = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    zoned = instant.astimezone(timezone(timedelta(hours=-5))).isoformat()
    person = Person(choosing("send"))
    arguments = {"draftId": draft_id, "language": language, "sendAfter": zoned}
    answer = structured(_call(served, "send_draft", arguments, mode, person))
    assert (answer["status"], answer["state"]) == ("queued", "queued")
    assert datetime.fromisoformat(answer["sendAfter"].replace("Z", "+00:00")) == instant
    [asked] = person.asked
    rows = asked.message.split("\n\n")[1].splitlines()
    assert rows[-1] == f"{row}: {instant:%Y-%m-%d %H:%M:%S} UTC"
    with served.services() as services:
        record = services.outbox().find(uuid.UUID(answer["outgoingEmailId"]))
        assert record is not None
        services.outbox().withdraw(record.outgoing_id)


def test_a_send_after_already_past_is_shown_as_asked(served: Served) -> None:
    """The row states the instant asked for, past or not: a question answered after its
    instant must still be the question the person was shown."""
    draft_id, _ = _saved_draft(served, BODY)
    person = Person(choosing("cancel"))
    arguments = {"draftId": draft_id, "sendAfter": "2026-01-01T01:00:00+01:00"}
    assert structured(_call(served, "send_draft", arguments, "legacy", person))["status"] == (
        "cancelled"
    )
    [asked] = person.asked
    rows = asked.message.split("\n\n")[1].splitlines()
    assert [row.split(":")[0] for row in rows] == ["From", "To", "Subject", "Leaves after"]
    assert rows[-1] == "Leaves after: 2026-01-01 00:00:00 UTC"


@pytest.mark.parametrize("mode", MODES)
def test_a_draft_edited_between_question_and_answer_is_not_sent(served: Served, mode: str) -> None:
    draft_id, _ = _saved_draft(served, BODY)
    edited = "Shall we book the table by the door instead?\n"
    register_all([edited.strip()])

    async def edit_then_send(params: ElicitRequestParams) -> ElicitResult:
        arguments = {
            "draftId": draft_id,
            "account": "work",
            "to": ["friend@example.org"],
            "subject": SUBJECT,
            "plainTextBody": edited,
        }
        await anyio.to_thread.run_sync(
            lambda: structured(
                _call(served, "update_draft", arguments, "legacy", None, key="plain")
            )
        )
        return ElicitResult(action="accept", content={"choice": "send"})

    arguments = {"draftId": draft_id}
    result = _call(served, "send_draft", arguments, mode, Person(edit_then_send))
    assert code(result) == 59004
    assert _draft_life(served, draft_id) is DraftLife.LIVE
    # Nothing of the draft is waiting to be sent.
    with served.services() as services:
        pending = [
            e
            for e in services.outbox().listing(1000)
            if e.idempotency_key.startswith(f"\x1fdraft {draft_id}")
            and e.record.stage.value == "queued"
        ]
    assert pending == []


def test_save_draft_as_the_answer_leaves_the_draft_as_it_is(served: Served) -> None:
    draft_id, _ = _saved_draft(served, BODY)
    result = _call(
        served, "send_draft", {"draftId": draft_id}, "legacy", Person(choosing("saveDraft"))
    )
    answer = structured(result)
    assert (answer["status"], answer["draftId"], answer["sent"]) == ("draft", draft_id, False)
    assert _draft_life(served, draft_id) is DraftLife.LIVE


def _draft_life(served: Served, draft_id: str) -> DraftLife:
    with served.services() as services:
        draft = SqlDraftStore(services.engine).find(uuid.UUID(draft_id))
    assert draft is not None
    return draft.life


def test_a_forward_kept_as_a_draft_lists_the_files_it_carries(served: Served) -> None:
    arguments = {
        "storedEmailId": _stored_email_id(served),
        "to": ["friend@example.org"],
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }
    answer = structured(_call(served, "forward_email", arguments, MODES[0], None))
    assert answer["status"] == "draft"
    draft = _draft(served, answer["draftId"])
    assert draft.files == (DraftFile(ATTACHED[0], len(ATTACHED[1])),)


def test_a_draft_with_no_subject_is_shown_without_an_empty_subject_row(served: Served) -> None:
    body = f"No title on this one yet. Reference {uuid.uuid4().hex[:8]}.\n"
    register_all([body.strip()])
    arguments = {
        "account": "work",
        "to": ["friend@example.org"],
        "subject": "",
        "plainTextBody": body,
    }
    saved = structured(_call(served, "save_draft", arguments, "legacy", None, key="plain"))
    person = Person(choosing("cancel"))
    answer = structured(
        _call(served, "send_draft", {"draftId": saved["draftId"]}, "legacy", person)
    )
    assert answer["status"] == "cancelled"
    [asked] = person.asked
    rows = asked.message.split("\n\n")[1].splitlines()
    assert [row.split(":")[0] for row in rows] == ["From", "To"]
