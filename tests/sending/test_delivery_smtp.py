"""send_email through the delivery pass to a real submission server (aiosmtpd, STARTTLS and
AUTH required), checked on the bytes the server received."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.codes import Code, DeliveryCode
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import RecipientState, Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, OTHER_AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from .helpers import open_deployment as _open

SUBJECT = "Quarterly figures — Überblick"
BODY = "Hello,\n\nthe figures are attached to nothing at all.\nRegards\n"
HTML = "<p>Hello, the <b>figures</b>.</p>"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    smtp.clear()
    yield from _open(tmp_path, smtp, monkeypatch)


def _request(**overrides: object) -> SendRequest:
    register_all([SUBJECT, BODY, HTML, "ann@example.net", "bob@example.net", "cat@example.com"])
    fields: dict[str, object] = {
        "account": "work",
        "to": ["ann@example.net"],
        "subject": SUBJECT,
        "plain_text_body": BODY,
        "idempotency_key": "first-message",
        "cc": ["bob@example.net"],
        "bcc": ["cat@example.com"],
        "html_body": HTML,
    }
    fields.update(overrides)
    return SendRequest(**fields)  # type: ignore[arg-type]


def _deliver(d: SendingDeployment) -> None:
    assert d.smtp is not None
    d.services.delivery_pass(tls_context=d.smtp.client_context).run_once()


def test_a_send_is_queued_then_delivered_with_the_right_bytes_and_no_bcc_header(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(AGENT, _request())
    assert record.stage is Stage.QUEUED
    assert len(record.recipients) == 3
    assert smtp.received() == []

    _deliver(deployment)

    (received,) = smtp.received()
    assert received.tls
    assert received.login == SMTP_USER
    assert received.mail_from == "me@example.org"
    assert received.rcpt_tos == ["ann@example.net", "bob@example.net", "cat@example.com"]
    raw = received.content
    assert b"\r\n" in raw
    assert all(byte < 128 for byte in raw), "every part is 7-bit"
    assert b"bcc" not in raw.lower()
    assert b"cat@example.com" not in raw
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert message["From"].addresses[0].addr_spec == "me@example.org"
    assert message["From"].addresses[0].display_name == "Mé Example"
    assert message["To"] == "ann@example.net"
    assert message["Cc"] == "bob@example.net"
    assert message["Subject"] == SUBJECT
    assert message["Message-ID"].endswith("@example.org>")
    assert message["In-Reply-To"] is None
    plain = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    html = message.get_body(("html",)).get_content()  # type: ignore[union-attr]
    assert plain.replace("\r\n", "\n") == BODY
    assert html.strip() == HTML

    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert after.stage is Stage.SENT
    assert after.attempt_count == 1
    assert [(r.state, r.last_reply_code) for r in after.recipients] == [
        (RecipientState.ACCEPTED, 250)
    ] * 3


def test_a_retry_with_the_same_key_sends_nothing_more(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    sending = deployment.services.sending()
    first = sending.send.send(AGENT, _request())
    _deliver(deployment)
    again = sending.send.send(AGENT, _request(subject="Something else entirely"))
    assert again.outgoing_id == first.outgoing_id
    assert again.stage is Stage.SENT
    _deliver(deployment)
    assert len(smtp.received()) == 1


def test_one_address_named_in_two_fields_is_offered_once(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(
        AGENT, _request(to=["ann@example.net"], cc=["ANN@example.net"], bcc=["ann@example.net"])
    )
    assert len(record.recipients) == 1
    _deliver(deployment)
    (received,) = smtp.received()
    assert received.rcpt_tos == ["ann@example.net"]


def test_a_refused_recipient_is_recorded_and_the_others_receive_the_message(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    smtp.set_rules(rcpt={"bob@example.net": 550})
    sending = deployment.services.sending()
    record = sending.send.send(AGENT, _request())
    _deliver(deployment)
    (received,) = smtp.received()
    assert received.rcpt_tos == ["ann@example.net", "cat@example.com"]
    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert after.stage is Stage.SENT
    assert [(r.address, r.state, r.last_reply_code) for r in after.recipients] == [
        ("ann@example.net", RecipientState.ACCEPTED, 250),
        ("bob@example.net", RecipientState.REFUSED, 550),
        ("cat@example.com", RecipientState.ACCEPTED, 250),
    ]


def test_a_temporary_refusal_waits_and_the_next_attempt_delivers_once(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    smtp.set_rules(rcpt={"bob@example.net": 451})
    sending = deployment.services.sending()
    record = sending.send.send(AGENT, _request())
    _deliver(deployment)
    assert smtp.received() == []
    waiting = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert (waiting.stage, waiting.failure_code) == (Stage.QUEUED, DeliveryCode.TEMPORARY_FAILURE)
    assert waiting.recipients[1].last_reply_code == 451

    smtp.set_rules()
    _deliver(deployment)
    assert smtp.received() == [], "the retry waits for its backoff"
    deployment.clock.advance(31)
    _deliver(deployment)
    (received,) = smtp.received()
    assert received.rcpt_tos == ["ann@example.net", "bob@example.net", "cat@example.com"]
    done = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert (done.stage, done.attempt_count) == (Stage.SENT, 2)


def test_a_message_refused_at_data_ends_refused(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    smtp.set_rules(data=554)
    sending = deployment.services.sending()
    record = sending.send.send(AGENT, _request())
    _deliver(deployment)
    after = sending.outgoing.read(AGENT, str(record.outgoing_id))
    assert (after.stage, after.failure_code) == (Stage.FAILED, DeliveryCode.REFUSED_BY_SERVER)
    assert after.stage.published == "refused"
    with pytest.raises(Refusal) as refused:
        sending.cancellation.cancel(AGENT, str(record.outgoing_id))
    assert refused.value.code == Code.STATE_ALREADY_PASSED


def test_wrong_credentials_end_the_send_with_their_own_code(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    smtp.clear()
    for d in _open(tmp_path, smtp, monkeypatch):
        monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", "not-the-password")
        sending = d.services.sending()
        record = sending.send.send(AGENT, _request())
        _deliver(d)
        after = sending.outgoing.read(AGENT, str(record.outgoing_id))
        assert (after.stage, after.failure_code) == (Stage.FAILED, DeliveryCode.NOT_AUTHENTICATED)
    assert smtp.received() == []


def test_a_send_is_withdrawn_while_it_waits_and_then_never_leaves(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    sending = deployment.services.sending()
    record = sending.send.send(AGENT, _request())
    with pytest.raises(Refusal) as other:
        sending.cancellation.cancel(OTHER_AGENT, str(record.outgoing_id))
    assert other.value.code == Code.OUTGOING_NOT_KNOWN
    cancelled = sending.cancellation.cancel(AGENT, str(record.outgoing_id))
    assert cancelled.stage is Stage.CANCELLED
    assert sending.cancellation.cancel(AGENT, str(record.outgoing_id)) == cancelled
    _deliver(deployment)
    assert smtp.received() == []


def test_implicit_tls_submission_delivers_as_well(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}, implicit_tls=True).start()
    try:
        for d in _open(tmp_path, server, monkeypatch):
            record = d.services.sending().send.send(AGENT, _request())
            d.services.delivery_pass(tls_context=server.client_context).run_once()
            (received,) = server.received()
            assert received.tls
            assert received.login == SMTP_USER
            done = d.services.sending().outgoing.read(AGENT, str(record.outgoing_id))
            assert done.stage is Stage.SENT
    finally:
        server.close()


def test_temporary_failures_end_once_the_attempts_are_spent(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    smtp.clear()
    smtp.set_rules(rcpt={"ann@example.net": 451})
    for d in _open(tmp_path, smtp, monkeypatch, mail_delivery="MaxAttempts = 2"):
        sending = d.services.sending()
        record = sending.send.send(AGENT, _request())
        _deliver(d)
        d.clock.advance(31)
        _deliver(d)
        after = sending.outgoing.read(AGENT, str(record.outgoing_id))
        assert (after.stage, after.failure_code) == (Stage.FAILED, DeliveryCode.ATTEMPTS_SPENT)
        assert after.attempt_count == 2
    smtp.set_rules()
    assert smtp.received() == []
