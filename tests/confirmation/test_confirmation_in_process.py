"""A person's yes before mail leaves, with the official client connected to the server in
process and answering through its elicitation callback, in both protocol generations.

The deployment sends between two local mailboxes of its own, so what the person chose is
followed to its end without any mail server: a message sent is delivered by the delivery pass
into the peer's inbox, once. How the question reads in each language, and the same answers
over Streamable HTTP, are tried in test_confirmation_http.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult

from log_audit import register_all
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.domain.drafts import DraftLife
from mailfathom.domain.outgoing import Stage
from mcp_tests.client import code, structured, text
from mcp_tests.in_process import MODES, InProcess, caller_entries, in_process
from sending.served import _local_account

from .asking import NO_CHOICE, NO_CHOICE_IDS, Answering, Person, acting, choosing

SUBJECT = "Lunch on the terrace"
BODY = "Shall we take the table in the sun?\nNoon suits me.\n"
ANSWERED = "Seating plan for the terrace"
PEER = "friend@example.org"


def _config(root: Path) -> str:
    accounts = ""
    for account_id, address, name in (("work", "owner@example.net", "Owner Desk"),
                                      ("peer", PEER, "Friend")):  # fmt: skip
        delivery = f'[Accounts.Delivery]\nEnabled = true\nAddress = "{address}"\n'
        accounts += _local_account(account_id, address, delivery + f'DisplayName = "{name}"\n')
    grants = {"asks": None, "plain": None}
    callers = caller_entries(grants, asks='Confirmation = "ask"')
    return f"""
[Store]
DataDir = "{root / "data"}"
{accounts}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
ConfirmationTimeoutSeconds = 30

{callers}"""


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcess]:
    register_all([SUBJECT, BODY.splitlines()[0], ANSWERED, PEER, "owner@example.net"])
    root = tmp_path_factory.mktemp("confirming")

    def fill(services: Any) -> None:
        raw = (
            f"From: Friend <{PEER}>\r\nTo: owner@example.net\r\nSubject: {ANSWERED}\r\n"
            f"Message-ID: <{uuid.uuid4().hex}@example.org>\r\n\r\nWhere do we sit?\r\n"
        )
        services.connectors.local.folder("work", "INBOX").deliver(raw.encode())

    with in_process(root, _config(root), fill) as opened:
        yield opened


def _send_arguments(**overrides: Any) -> dict[str, Any]:
    return {
        "account": "work",
        "to": [PEER],
        "subject": SUBJECT,
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
        **overrides,
    }


def _call(
    d: InProcess,
    tool: str,
    arguments: dict[str, Any],
    mode: str,
    person: Person | None,
    caller: str = "asks",
) -> CallToolResult:
    async def work(client: Any) -> CallToolResult:
        result: CallToolResult = await client.call_tool(tool, arguments)
        return result

    return d.session(caller, work, mode=mode, elicitation=person)


def _outbox_keys(d: InProcess) -> set[str]:
    return {entry.idempotency_key for entry in d.services.outbox().listing(1000)}


def _alert_count(d: InProcess) -> int:
    return len(d.services.alerts().listing(True, 1000))


def _delivered_to_peer(d: InProcess, marker: str) -> list[bytes]:
    """After a delivery pass, the messages in the peer's inbox whose octets carry `marker`."""
    d.services.delivery_pass().run_once()
    inbox = d.services.connectors.local.folder("peer", "INBOX").path
    files = [*inbox.glob("new/*"), *inbox.glob("cur/*")]
    return [raw for raw in (p.read_bytes() for p in files) if marker.encode() in raw]


def _answered_id(d: InProcess) -> str:
    listed = structured(d.call("plain", "list_emails", {"accounts": ["work"]}))
    [found] = [e for e in listed["emails"] if e["subject"] == ANSWERED]
    return str(found["storedEmailId"])


@pytest.mark.parametrize("mode", MODES)
def test_send_is_asked_once_and_the_message_shown_leaves_once(
    deployment: InProcess, mode: str
) -> None:
    marker = uuid.uuid4().hex
    arguments = _send_arguments(plainTextBody=f"{BODY}Reference {marker}.\n")
    person = Person(choosing("send"))
    answer = structured(_call(deployment, "send_email", arguments, mode, person))
    assert (answer["status"], answer["sent"], answer["state"]) == ("queued", False, "queued")
    [asked] = person.asked
    assert asked.message.splitlines()[2:5] == [
        "From: Owner Desk <owner@example.net>",
        f"To: {PEER}",
        f"Subject: {SUBJECT}",
    ]
    assert asked.message.endswith("\n" + arguments["plainTextBody"])

    delivered = _delivered_to_peer(deployment, marker)
    assert len(delivered) == 1
    assert f"Reference {marker}.".encode() in delivered[0]
    record = deployment.services.sending().outgoing.read(
        deployment.caller("asks"), answer["outgoingEmailId"]
    )
    assert record.stage is Stage.SENT
    # A second pass (as after a crash) leaves it delivered once.
    assert len(_delivered_to_peer(deployment, marker)) == 1


@pytest.mark.parametrize("mode", MODES)
def test_cancel_writes_nothing(deployment: InProcess, mode: str) -> None:
    arguments = _send_arguments()
    alerts = _alert_count(deployment)
    answer = structured(
        _call(deployment, "send_email", arguments, mode, Person(choosing("cancel")))
    )
    assert (answer["status"], answer["sent"], answer["outgoingEmailId"]) == (
        "cancelled",
        False,
        None,
    )
    assert arguments["idempotencyKey"] not in _outbox_keys(deployment)
    assert _alert_count(deployment) == alerts


@pytest.mark.parametrize("mode", MODES)
def test_save_draft_keeps_a_draft_and_sends_nothing(deployment: InProcess, mode: str) -> None:
    arguments = _send_arguments(cc=["pal@example.org"])
    answer = structured(
        _call(deployment, "send_email", arguments, mode, Person(choosing("saveDraft")))
    )
    assert (answer["status"], answer["sent"], answer["reason"]) == ("draft", False, None)
    assert answer["outgoingEmailId"] is None
    draft = SqlDraftStore(deployment.services.engine).find(uuid.UUID(answer["draftId"]))
    assert draft is not None
    assert draft.life is DraftLife.LIVE
    assert [(r.field.value, r.address) for r in draft.recipients] == [
        ("to", PEER),
        ("cc", "pal@example.org"),
    ]
    assert arguments["idempotencyKey"] not in _outbox_keys(deployment)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("answer", "expected"),
    NO_CHOICE,
    ids=NO_CHOICE_IDS,
)
def test_an_answer_that_is_no_choice_sends_and_saves_nothing(
    deployment: InProcess, mode: str, answer: Answering, expected: int
) -> None:
    arguments = _send_arguments()
    alerts = _alert_count(deployment)
    result = _call(deployment, "send_email", arguments, mode, Person(answer))
    assert code(result) == expected
    assert arguments["idempotencyKey"] not in _outbox_keys(deployment)
    assert _alert_count(deployment) == alerts


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"], ids=["declined", "dismissed"])
def test_a_declined_or_dismissed_question_is_told_as_such(
    deployment: InProcess, mode: str, action: str
) -> None:
    arguments = _send_arguments()
    result = _call(deployment, "send_email", arguments, mode, Person(acting(action)))
    assert text(result) == (
        "MailFathom error 59001: The person who was asked declined or dismissed the "
        "question; nothing was sent or saved."
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_caller_asked_nothing_sends_without_a_question(deployment: InProcess, mode: str) -> None:
    arguments = _send_arguments()
    person = Person(choosing("cancel"))
    answer = structured(_call(deployment, "send_email", arguments, mode, person, "plain"))
    assert (answer["status"], answer["state"]) == ("queued", "queued")
    assert person.asked == []
    assert arguments["idempotencyKey"] in _outbox_keys(deployment)


@pytest.mark.parametrize("mode", MODES)
def test_a_client_that_cannot_be_asked_gets_a_draft_and_the_owner_an_alert(
    deployment: InProcess, mode: str
) -> None:
    arguments = _send_arguments()
    alerts = _alert_count(deployment)
    answer = structured(_call(deployment, "send_email", arguments, mode, None))
    assert (answer["status"], answer["reason"]) == ("draft", "confirmation_unavailable")
    assert arguments["idempotencyKey"] not in _outbox_keys(deployment)
    assert _alert_count(deployment) == alerts + 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["reply_to_email", "forward_email"])
def test_an_answer_is_asked_before_it_is_queued(
    deployment: InProcess, mode: str, tool: str
) -> None:
    arguments: dict[str, Any] = {
        "storedEmailId": _answered_id(deployment),
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }
    if tool == "reply_to_email":
        arguments["audience"] = "senderOnly"
    else:
        arguments["to"] = [PEER]
    person = Person(choosing("send"))
    answer = structured(_call(deployment, tool, arguments, mode, person))
    assert answer["status"] == "queued"
    [asked] = person.asked
    prefix = "Re" if tool == "reply_to_email" else "Fwd"
    assert f"Subject: {prefix}: {ANSWERED}" in asked.message.splitlines()
    assert arguments["idempotencyKey"] in _outbox_keys(deployment)


@pytest.mark.parametrize("mode", MODES)
def test_send_draft_asks_and_sends_the_revision_shown(deployment: InProcess, mode: str) -> None:
    body = f"{BODY}Reference {uuid.uuid4().hex[:8]}.\n"
    saved = {"account": "work", "to": [PEER], "subject": SUBJECT, "plainTextBody": body}
    draft_id = structured(_call(deployment, "save_draft", saved, mode, None, "plain"))["draftId"]
    person = Person(choosing("send"))
    answer = structured(_call(deployment, "send_draft", {"draftId": draft_id}, mode, person))
    assert (answer["status"], answer["state"]) == ("queued", "queued")
    [asked] = person.asked
    assert asked.message.endswith("\n" + body)
    draft = SqlDraftStore(deployment.services.engine).find(uuid.UUID(draft_id))
    assert draft is not None
    assert draft.life is DraftLife.SENT
