"""A withdrawal racing a delivery attempt, met where the outbox's guards must hold: a message
is never both handed to the server and recorded as cancelled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mailfathom.adapters.sql.schema import outgoing_emails
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import Stage
from servers.smtp import SmtpServer
from store.overlapping_writes import interleaved, overlapped

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from .helpers import open_deployment as _open


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    yield from _open(tmp_path, smtp, monkeypatch)


# The delivery pass's claim reads the sends due in one transaction and takes each in another.
_READING_THE_DUE = rf"ORDER BY {outgoing_emails.name}\.not_before"
_TAKING_A_SEND = f"^UPDATE {outgoing_emails.name} SET stage="


def _withdrawn(sending: Any, outgoing_id: str) -> list[int]:
    """The withdrawal's refusals."""
    try:
        sending.cancellation.cancel(AGENT, outgoing_id)
    except Refusal as refused:
        return [refused.code]
    return []


@pytest.mark.parametrize("meeting", ["before the claim's write", "the claim's open write"])
def test_cancellation_racing_the_delivery_pass_never_cancels_a_transmitted_message(
    deployment: SendingDeployment, smtp: SmtpServer, meeting: str
) -> None:
    """The withdrawal comes once the pass has read the message as due, before it takes it,
    or while the pass's taking of it is not yet committed; either one wins, never both."""
    sending = deployment.services.sending()
    delivery = deployment.services.delivery_pass(tls_context=smtp.client_context)
    engine = deployment.services.engine
    subject = "Race round"
    register_all([subject, "racer@example.net"])
    record = sending.send.send(
        AGENT,
        SendRequest(
            account="work",
            to=["racer@example.net"],
            subject=subject,
            plain_text_body="Whoever wins, the record says what happened.\n",
            idempotency_key=subject,
        ),
    )
    outgoing_id = str(record.outgoing_id)
    if meeting == "before the claim's write":
        _, refusals = interleaved(
            engine,
            delivery.run_once,
            lambda: _withdrawn(sending, outgoing_id),
            after=_READING_THE_DUE,
        )
    else:
        _, refusals = overlapped(
            engine, delivery.run_once, lambda: _withdrawn(sending, outgoing_id), at=_TAKING_A_SEND
        )
    final = sending.outgoing.read(AGENT, outgoing_id)
    assert refusals in ([], [Code.STATE_ALREADY_PASSED])
    assert (final.stage is Stage.CANCELLED) == (refusals == [])
    received = any(subject.encode() in m.content for m in smtp.received())
    if final.stage is Stage.CANCELLED:
        assert not received, "transmitted and recorded as cancelled"
    else:
        assert final.stage is Stage.SENT
        assert received
