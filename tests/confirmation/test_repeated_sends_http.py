"""A sending call repeated with its idempotencyKey after the first one queued the message, over
Streamable HTTP with the official client, in both protocol generations.

The repeat answers the send the first call wrote, as it stands now (queued, sent, refused or
withdrawn), and asks nobody: whatever the person would have answered (Send, Save draft,
Cancel, or declining the question) is never asked for, and the capture SMTP server receives
the message once. A call whose key is sent by another call while its own person decides is
answered with that send too, never with `cancelled` or a draft.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import pytest
from mcp.types import ElicitRequestParams, ElicitResult

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.client import code, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer

from .asking import Answering, Person, acting, choosing
from .served import Served, serve
from .test_confirmation_http import (
    BODY,
    MODES,
    _alert_count,
    _call,
    _send_arguments,
    _stored_email_id,
)

TOOLS = ["send_email", "reply_to_email", "forward_email"]
# What the person would answer if the repeat asked them.
ANSWERS: dict[str, Answering] = {
    "send": choosing("send"),
    "saveDraft": choosing("saveDraft"),
    "cancel": choosing("cancel"),
    "decline": acting("decline"),
}
# A repeat from a client that cannot put a question to anybody (it would keep a draft and
# alert the owner, were it not a repeat).
UNASKABLE = "unaskable"


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
    account = dovecot.add_user(f"repeats-{suffix}", f"pw-{suffix}")
    yield from serve(tmp_path_factory.mktemp("repeated-sends"), account, smtp)


def _marked() -> tuple[str, str]:
    """A body no other test sends, and the reference that tells its messages apart."""
    reference = f"Ref{uuid.uuid4().hex[:12]}"
    register_all([reference])
    return reference, f"{BODY}{reference}\n"


def _arguments(served: Served, tool: str, body: str) -> dict[str, Any]:
    if tool == "send_email":
        return _send_arguments("en", plainTextBody=body)
    common = {"plainTextBody": body, "idempotencyKey": uuid.uuid4().hex}
    if tool == "reply_to_email":
        return {"storedEmailId": _stored_email_id(served), "audience": "senderOnly", **common}
    return {"storedEmailId": _stored_email_id(served), "to": ["friend@example.org"], **common}


def _drafts_and_sends(served: Served) -> tuple[int, int]:
    with served.services() as services, services.engine.connect() as connection:
        drafts = connection.exec_driver_sql("SELECT count(*) FROM drafts").scalar_one()
        sends = connection.exec_driver_sql("SELECT count(*) FROM outgoing_emails").scalar_one()
    return int(drafts), int(sends)


def _deliver(served: Served, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """One delivery pass, past the deployment's hour of hold, to the capture SMTP server."""
    monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
    later = datetime.now(UTC) + timedelta(hours=2)
    with Services.open(load_config(served.config_path), clock=lambda: later) as services:
        services.delivery_pass(tls_context=smtp.client_context).run_once()


def _received(smtp: SmtpServer, reference: str) -> int:
    return sum(reference.encode() in m.content for m in smtp.received())


def _sent_once(
    served: Served, tool: str, mode: str, body: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first call, answered Send: asked once, queued."""
    arguments = _arguments(served, tool, body)
    person = Person(choosing("send"))
    first = structured(_call(served, tool, arguments, mode, person))
    assert (first["status"], first["state"]) == ("queued", "queued")
    assert len(person.asked) == 1
    return arguments, first


def _same_send(answer: dict[str, Any], first: dict[str, Any], state: str) -> None:
    assert answer == {**first, "state": state, "sent": state == "sent"}


def _repeated(
    served: Served, tool: str, arguments: dict[str, Any], mode: str, answer: str
) -> dict[str, Any]:
    """The call made again, from a client whose person would answer `answer` (asserting
    they were not asked), or from one that cannot ask anybody."""
    if answer == UNASKABLE:
        return structured(_call(served, tool, arguments, mode, None))
    person = Person(ANSWERS[answer])
    again = structured(_call(served, tool, arguments, mode, person))
    assert person.asked == []
    return again


@pytest.mark.parametrize("answer", [*ANSWERS, UNASKABLE])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", TOOLS)
def test_a_repeat_answers_the_queued_send_without_asking(
    served: Served,
    smtp: SmtpServer,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    mode: str,
    answer: str,
) -> None:
    reference, body = _marked()
    arguments, first = _sent_once(served, tool, mode, body)
    before = _drafts_and_sends(served)
    alerts = _alert_count(served)

    again = _repeated(served, tool, arguments, mode, answer)

    _same_send(again, first, "queued")
    assert _drafts_and_sends(served) == before

    _deliver(served, smtp, monkeypatch)
    assert _received(smtp, reference) == 1
    after = _repeated(served, tool, arguments, mode, answer)
    _same_send(after, first, "sent")
    assert _drafts_and_sends(served) == before
    assert _alert_count(served) == alerts
    assert _received(smtp, reference) == 1


@pytest.mark.parametrize("mode", MODES)
def test_a_repeat_of_a_withdrawn_send_answers_it_withdrawn_and_sends_nothing(
    served: Served, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    reference, body = _marked()
    arguments, first = _sent_once(served, "send_email", mode, body)
    withdrawn = _call(
        served, "cancel_outgoing_email", {"outgoingEmailId": first["outgoingEmailId"]}, mode, None
    )
    assert structured(withdrawn)["state"] == "cancelled"
    before = _drafts_and_sends(served)

    person = Person(choosing("send"))
    again = structured(_call(served, "send_email", arguments, mode, person))

    assert person.asked == []
    _same_send(again, first, "cancelled")
    assert _drafts_and_sends(served) == before
    _deliver(served, smtp, monkeypatch)
    assert _received(smtp, reference) == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_repeat_of_a_refused_send_answers_it_refused_and_offers_it_no_more(
    served: Served, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    reference, body = _marked()
    arguments, first = _sent_once(served, "send_email", mode, body)
    smtp.set_rules(rcpt={"friend@example.org": 550, "hidden@example.org": 550})
    try:
        _deliver(served, smtp, monkeypatch)
    finally:
        smtp.set_rules()
    before = _drafts_and_sends(served)

    person = Person(choosing("send"))
    again = structured(_call(served, "send_email", arguments, mode, person))

    assert person.asked == []
    _same_send(again, first, "refused")
    assert _drafts_and_sends(served) == before
    _deliver(served, smtp, monkeypatch)
    assert _received(smtp, reference) == 0


def _sent_meanwhile(
    sent: list[dict[str, Any]], send: Callable[[], dict[str, Any]], then: Answering
) -> Answering:
    """A person who, before answering, lets another call with the same identity finish
    sending; `sent` keeps that call's answer."""

    async def answer(params: ElicitRequestParams) -> ElicitResult:
        if not sent:
            sent.append(await anyio.to_thread.run_sync(send))
        return await then(params)

    return answer


@pytest.mark.parametrize("answer", ["cancel", "saveDraft", "decline"])
@pytest.mark.parametrize("mode", MODES)
def test_a_call_whose_key_was_sent_while_its_person_decided_answers_that_send(
    served: Served, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch, mode: str, answer: str
) -> None:
    reference, body = _marked()
    arguments = _arguments(served, "send_email", body)
    sent: list[dict[str, Any]] = []

    def other_call() -> dict[str, Any]:
        return structured(_call(served, "send_email", arguments, mode, Person(choosing("send"))))

    person = Person(_sent_meanwhile(sent, other_call, ANSWERS[answer]))
    first = structured(_call(served, "send_email", arguments, mode, person))

    assert len(person.asked) == 1
    [other] = sent
    assert other["status"] == "queued"
    _same_send(first, other, "queued")
    _deliver(served, smtp, monkeypatch)
    assert _received(smtp, reference) == 1


def _saved_draft(served: Served, body: str) -> str:
    arguments = {
        "account": "work",
        "to": ["friend@example.org"],
        "subject": "Dinner plans for Saturday",
        "plainTextBody": body,
    }
    answer = structured(_call(served, "save_draft", arguments, "legacy", None, key="plain"))
    return str(answer["draftId"])


@pytest.mark.parametrize("answer", ["cancel", "saveDraft", "decline"])
@pytest.mark.parametrize("mode", MODES)
def test_a_send_draft_whose_draft_was_sent_while_its_person_decided_answers_that_send(
    served: Served, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch, mode: str, answer: str
) -> None:
    reference, body = _marked()
    draft_id = _saved_draft(served, body)
    sent: list[dict[str, Any]] = []

    def other_call() -> dict[str, Any]:
        return structured(
            _call(served, "send_draft", {"draftId": draft_id}, mode, None, key="plain")
        )

    person = Person(_sent_meanwhile(sent, other_call, ANSWERS[answer]))
    first = structured(_call(served, "send_draft", {"draftId": draft_id}, mode, person))

    assert len(person.asked) == 1
    [other] = sent
    assert other["status"] == "queued"
    _same_send(first, other, "queued")
    _deliver(served, smtp, monkeypatch)
    assert _received(smtp, reference) == 1

    person = Person(choosing("send"))
    again = structured(_call(served, "send_draft", {"draftId": draft_id}, mode, person))
    assert person.asked == []
    _same_send(again, other, "sent")


@pytest.mark.parametrize("mode", MODES)
def test_a_key_another_caller_sent_under_is_refused_without_asking(
    served: Served, mode: str
) -> None:
    _, body = _marked()
    arguments = _arguments(served, "send_email", body)
    theirs = structured(_call(served, "send_email", arguments, mode, None, key="plain"))
    assert theirs["status"] == "queued"
    before = _drafts_and_sends(served)

    person = Person(choosing("send"))
    assert code(_call(served, "send_email", arguments, mode, person)) == 51013

    assert person.asked == []
    assert _drafts_and_sends(served) == before
