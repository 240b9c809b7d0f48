"""send_draft's sendAfter over Streamable HTTP with the official client, against a served
deployment whose delivery worker hands mail to a real SMTP server: the answer echoes the
instant in UTC, every text that is no instant with an offset (or lies too far ahead) is
refused naming the argument only, the message waits for its instant across a restart of the
server and its worker and then arrives once, and one cancelled while waiting never does."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mcp_tests.client import call, code, structured, text
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from sending.served import KEYS, Served, _callers, _local_account, _smtp_block, serve
from servers.smtp import SmtpServer
from waiting import wait_for

AGENT = KEYS["agent"]
SUBJECT = "Reminder about the allotment rota"
BODY = "Your turn at the allotment is on Saturday morning."
ZERO = "00000000-0000-0000-0000-000000000000"
# Far enough ahead that a server restart and the checks around it finish before it.
LEAD = timedelta(seconds=12)


def _config(root: Path, smtp: SmtpServer) -> str:
    work = _local_account(
        "work",
        "me@example.org",
        '[Accounts.Delivery]\nEnabled = true\nAddress = "me@example.org"\n' + _smtp_block(smtp),
    )
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false
{work}{_callers()}"""


class Deployment:
    """A served deployment that can be stopped and served again over the same store."""

    def __init__(self, root: Path, smtp: SmtpServer) -> None:
        self.root, self.smtp = root, smtp
        self._serving = ExitStack()
        self.served = self.start()

    def start(self) -> Served:
        serving = contextmanager(serve)(
            self.root, _config(self.root, self.smtp), self.smtp, deliver=True
        )
        return self._serving.enter_context(serving)

    def stop(self) -> None:
        self._serving.close()

    def restart(self) -> None:
        self.stop()
        self.served = self.start()

    @property
    def url(self) -> str:
        return self.served.url


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    smtp = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    register_all([SUBJECT, BODY])
    d = Deployment(tmp_path_factory.mktemp("scheduled-http"), smtp)
    try:
        yield d
    finally:
        d.stop()
        smtp.close()


def _recipient() -> str:
    address = f"rota-{uuid.uuid4().hex[:10]}@example.net"
    register_all([address])
    return address


def _draft(d: Deployment, recipient: str) -> str:
    arguments = {"account": "work", "subject": SUBJECT, "to": [recipient], "plainTextBody": BODY}
    return str(structured(call(d.url, AGENT, "save_draft", arguments))["draftId"])


def _send(d: Deployment, draft_id: str, send_after: Any) -> Any:
    return call(d.url, AGENT, "send_draft", {"draftId": draft_id, "sendAfter": send_after})


def _outgoing(d: Deployment, outgoing_id: str) -> dict[str, Any]:
    return structured(call(d.url, AGENT, "get_outgoing_email", {"outgoingEmailId": outgoing_id}))


def _arrived(d: Deployment, recipient: str) -> int:
    return sum(recipient in m.rcpt_tos for m in d.smtp.received())


def _instant(text_: str) -> datetime:
    return datetime.fromisoformat(text_.replace("Z", "+00:00"))


def test_a_send_after_is_answered_queued_with_the_instant_in_utc(deployment: Deployment) -> None:
    recipient = _recipient()
    draft_id = _draft(deployment, recipient)
    east = timezone(timedelta(hours=2))
    asked = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    answer = structured(_send(deployment, draft_id, asked.astimezone(east).isoformat()))
    assert (answer["status"], answer["state"], answer["sent"]) == ("queued", "queued", False)
    assert answer["sendAfter"].endswith("Z")
    assert _instant(answer["sendAfter"]) == asked
    status = _outgoing(deployment, answer["outgoingEmailId"])
    assert (status["state"], status["sendAfter"]) == ("queued", answer["sendAfter"])
    # Asked again with another instant: the first record, unchanged.
    again = structured(_send(deployment, draft_id, "2020-01-01T00:00:00Z"))
    assert again["outgoingEmailId"] == answer["outgoingEmailId"]
    assert again["sendAfter"] == answer["sendAfter"]
    # Waiting, so it can be withdrawn; the record keeps the instant it was waiting for.
    cancel = {"outgoingEmailId": answer["outgoingEmailId"]}
    withdrawn = structured(call(deployment.url, AGENT, "cancel_outgoing_email", cancel))
    assert withdrawn["state"] == "cancelled"
    after = _outgoing(deployment, answer["outgoingEmailId"])
    assert (after["state"], after["sendAfter"]) == ("cancelled", answer["sendAfter"])


def test_without_send_after_the_answer_names_no_instant(deployment: Deployment) -> None:
    answer = structured(
        call(deployment.url, AGENT, "send_draft", {"draftId": _draft(deployment, _recipient())})
    )
    assert answer["status"] == "queued"
    assert answer.get("sendAfter") is None
    assert _outgoing(deployment, answer["outgoingEmailId"]).get("sendAfter") is None


def _ahead(days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


@pytest.mark.parametrize(
    "given",
    [
        pytest.param("2026-12-24T09:00:00", id="no-offset"),
        pytest.param("2026-12-24", id="a-date"),
        pytest.param("tomorrow at nine", id="words"),
        pytest.param("1767000000", id="seconds"),
        pytest.param("", id="empty"),
        pytest.param("null", id="null-text"),
        pytest.param("2026-02-30T09:00:00Z", id="no-such-day"),
        pytest.param("2026-12-24T09:00:00+25:00", id="no-such-offset"),
        pytest.param("0001-01-01T00:00:00+14:00", id="before-any-utc-instant"),
        pytest.param("9999-12-31T23:59:59-12:00", id="after-any-utc-instant"),
        pytest.param(_ahead(30.5), id="more-than-30-days"),
    ],
)
def test_a_send_after_that_is_no_usable_instant_is_refused_naming_the_argument(
    deployment: Deployment, given: str
) -> None:
    register_all([g for g in [given] if len(g) > 4])
    draft_id = _draft(deployment, _recipient())
    result = _send(deployment, draft_id, given)
    assert code(result) == 51013
    assert "sendAfter" in text(result)
    if given:
        assert given not in text(result)
    # Refused before the draft is looked up, and the draft is left to be sent.
    assert code(_send(deployment, ZERO, given)) == 51013
    sent = structured(_send(deployment, draft_id, _ahead(29)))
    assert sent["status"] == "queued"
    cancel = {"outgoingEmailId": sent["outgoingEmailId"]}
    assert structured(call(deployment.url, AGENT, "cancel_outgoing_email", cancel))


@pytest.mark.parametrize(
    "given", [pytest.param(1767000000, id="number"), pytest.param(True, id="boolean")]
)
def test_a_send_after_that_is_no_text_is_refused_against_the_schema(
    deployment: Deployment, given: object
) -> None:
    result = _send(deployment, _draft(deployment, _recipient()), given)
    assert code(result) == 51017
    assert "'sendAfter'" in text(result)


@pytest.mark.parametrize("tool", ["send_email", "reply_to_email", "forward_email"])
def test_the_other_sending_tools_take_no_send_after(deployment: Deployment, tool: str) -> None:
    result = call(deployment.url, AGENT, tool, {"sendAfter": _ahead(1)})
    assert code(result) == 51017
    assert "'sendAfter' is not an argument of this tool" in text(result)


def test_an_instant_already_past_sends_as_soon_as_possible(deployment: Deployment) -> None:
    recipient = _recipient()
    past = "2026-01-01T08:00:00+01:00"
    answer = structured(_send(deployment, _draft(deployment, recipient), past))
    assert _instant(answer["sendAfter"]) == datetime(2026, 1, 1, 7, tzinfo=UTC)
    wait_for(lambda: _arrived(deployment, recipient), "the message did not arrive", timeout=30)
    sent = wait_for(
        lambda: (s := _outgoing(deployment, answer["outgoingEmailId"]))["state"] == "sent" and s,
        "the send was not recorded sent",
        timeout=30,
    )
    assert sent["sendAfter"] == answer["sendAfter"]


def _lead_beyond_a_restart(d: Deployment) -> timedelta:
    started = time.monotonic()
    d.restart()
    return LEAD + 4 * timedelta(seconds=time.monotonic() - started)


def test_a_held_send_waits_across_a_restart_then_arrives_once_and_a_cancelled_one_never(
    deployment: Deployment,
) -> None:
    held, withdrawn = _recipient(), _recipient()
    # The instant must lie beyond a restart however busy the host is: a first restart
    # measures one.
    lead = _lead_beyond_a_restart(deployment)
    instant = (datetime.now(UTC) + lead).replace(microsecond=0)
    answers = [
        structured(_send(deployment, _draft(deployment, r), instant.isoformat()))
        for r in (held, withdrawn)
    ]
    assert [_instant(a["sendAfter"]) for a in answers] == [instant, instant]
    cancel = {"outgoingEmailId": answers[1]["outgoingEmailId"]}
    assert structured(call(deployment.url, AGENT, "cancel_outgoing_email", cancel))["state"] == (
        "cancelled"
    )
    assert (_arrived(deployment, held), _arrived(deployment, withdrawn)) == (0, 0)

    deployment.restart()
    assert datetime.now(UTC) < instant, "the restart took longer than the lead"
    status = _outgoing(deployment, answers[0]["outgoingEmailId"])
    assert (status["state"], status["attemptCount"]) == ("queued", 0)
    assert status["sendAfter"] == answers[0]["sendAfter"]
    assert _outgoing(deployment, answers[1]["outgoingEmailId"])["state"] == "cancelled"

    def first_seen() -> datetime | None:
        return datetime.now(UTC) if _arrived(deployment, held) else None

    seen = wait_for(first_seen, "the held message did not arrive", timeout=lead.seconds + 30)
    assert seen >= instant
    sent = wait_for(
        lambda: (
            (s := _outgoing(deployment, answers[0]["outgoingEmailId"]))["state"] == "sent" and s
        ),
        "the held send was not recorded sent",
        timeout=30,
    )
    assert sent["attemptCount"] == 1
    # The cancelled one was due at the same instant and is never offered.
    assert _outgoing(deployment, answers[1]["outgoingEmailId"])["state"] == "cancelled"
    assert (_arrived(deployment, held), _arrived(deployment, withdrawn)) == (1, 0)
