"""A caller admitted by an OAuth access token is its entry for sending as an API-key caller
is: with `Confirmation = "ask"` a person answers Send in the client before the message
leaves, with `"none"` nobody is asked, and the entry's send ceilings count its sends. Served
by `mailfathom serve` with the delivery pass on, so a confirmed message reaches the capture
SMTP server, and reached with the official client in both protocol generations."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mcp_tests.client import call, code, structured
from mcp_tests.deployment import _free_port
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from sending.served import Served, _local_account, _smtp_block, serve
from servers.oauth import OAuthServer
from servers.smtp import SmtpServer
from waiting import wait_for

from .asking import Person, choosing

MODES = ["2026-07-28", "legacy"]
SEND = "mailfathom.mail.send"
SUBJECTS = {name: f"subject-{name}-{uuid.uuid4().hex[:8]}" for name in ("asks", "plain", "hurried")}
PER_HOUR = 2
BODY = "The minutes are attached to the calendar entry.\n"
FRIEND = "friend@example.net"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def _entry(name: str, confirmation: str) -> str:
    return f"""
[[McpEndpoint.Callers]]
Name = "{name}"
Credential = "oauth"
Subject = "{SUBJECTS[name]}"
Confirmation = "{confirmation}"
"""


def _config(root: Path, smtp: SmtpServer, issuer: str, resource: str) -> str:
    delivery = '[Accounts.Delivery]\nEnabled = true\nAddress = "me@example.org"\n'
    account = _local_account("work", "me@example.org", delivery + _smtp_block(smtp))
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery.SendCeilings]
Client = {{ PerHour = {PER_HOUR} }}
{account}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
ConfirmationTimeoutSeconds = 30

[McpEndpoint.OAuth]
Resource = "{resource}"
AuthorizationServers = ["{issuer}"]
{_entry("asks", "ask")}{_entry("plain", "none")}{_entry("hurried", "none")}"""


@pytest.fixture(scope="module")
def served(
    smtp: SmtpServer, oauth_server: OAuthServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    register_all(list(SUBJECTS.values()))
    root = tmp_path_factory.mktemp("oauth-sending")
    port = _free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    text = _config(root, smtp, oauth_server.issuer, resource)
    yield from serve(root, text, smtp, deliver=True, port=port)


def _token(server: OAuthServer, served: Served, who: str) -> str:
    token = server.mint_access_token(SUBJECTS[who], audience=served.url, scopes=["openid", SEND])
    register_all([token])
    return token


def _send(subject: str) -> dict[str, Any]:
    register_all([subject, BODY.strip(), FRIEND])
    return {
        "account": "work",
        "to": [FRIEND],
        "subject": subject,
        "plainTextBody": BODY,
        "idempotencyKey": uuid.uuid4().hex,
    }


def _received(smtp: SmtpServer, subject: str) -> int:
    return sum(1 for r in smtp.received() if subject.encode() in r.content)


def _transmitted_once(served: Served, smtp: SmtpServer, token: str, answer: Any) -> None:
    """The delivery pass hands the queued message to the SMTP server, in one attempt."""
    identifier = answer["outgoingEmailId"]

    def sent() -> dict[str, Any] | None:
        found = structured(
            call(served.url, token, "get_outgoing_email", {"outgoingEmailId": identifier})
        )
        return found if found["state"] == "sent" else None

    status = wait_for(sent, "the send was not transmitted", interval=0.5)
    assert status["attemptCount"] == 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("who", "asked"), [("asks", True), ("plain", False)])
def test_the_token_s_entry_decides_whether_a_person_answers_send_first(
    served: Served, smtp: SmtpServer, oauth_server: OAuthServer, who: str, asked: bool, mode: str
) -> None:
    token = _token(oauth_server, served, who)
    subject = f"Minutes of the board ({who}, {mode}, {uuid.uuid4().hex[:6]})"
    # A person who would cancel, were they asked without reason.
    person = Person(choosing("send" if asked else "cancel"))
    result = call(
        served.url,
        token,
        "send_email",
        _send(subject),
        mode=mode,
        elicitation_callback=person,
    )
    answer = structured(result)
    assert answer["status"] == "queued"
    assert len(person.asked) == (1 if asked else 0)
    for question in person.asked:
        assert FRIEND in question.message
        assert subject in question.message
    _transmitted_once(served, smtp, token, answer)
    assert _received(smtp, subject) == 1


def test_the_entry_s_send_ceiling_counts_the_sends_of_its_tokens(
    served: Served, smtp: SmtpServer, oauth_server: OAuthServer
) -> None:
    subjects = [f"Reminder {n} ({uuid.uuid4().hex[:6]})" for n in range(PER_HOUR + 1)]
    outcomes = []
    for subject in subjects:
        # A token of its own for each call: the ceiling belongs to the entry, not the token.
        token = _token(oauth_server, served, "hurried")
        outcomes.append(code(call(served.url, token, "send_email", _send(subject))))
    assert outcomes == [None] * PER_HOUR + [57002]
    wait_for(
        lambda: all(_received(smtp, s) for s in subjects[:PER_HOUR]),
        "the sends within the ceiling were not transmitted",
    )
    assert _received(smtp, subjects[-1]) == 0
