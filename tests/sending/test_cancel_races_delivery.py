"""A withdrawal racing a delivery attempt, many times over: a message is never both handed to
the server and recorded as cancelled."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from .helpers import open_deployment as _open

ROUNDS = 40


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


def _race(delivery: Any, sending: Any, outgoing_id: str) -> list[int]:
    """A delivery pass and a withdrawal released together; the withdrawal's refusals."""
    start = threading.Barrier(2)
    refusals: list[int] = []

    def deliver() -> None:
        start.wait(timeout=30)
        delivery.run_once()

    def cancel() -> None:
        start.wait(timeout=30)
        try:
            sending.cancellation.cancel(AGENT, outgoing_id)
        except Refusal as refused:
            refusals.append(refused.code)

    threads = [threading.Thread(target=deliver), threading.Thread(target=cancel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return refusals


def test_cancellation_racing_the_delivery_pass_never_cancels_a_transmitted_message(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    sending = deployment.services.sending()
    delivery = deployment.services.delivery_pass(tls_context=smtp.client_context)
    subjects = [f"Race round {i:02d}" for i in range(ROUNDS)]
    register_all([*subjects, "racer@example.net"])
    outcomes: list[tuple[str, Stage]] = []
    for subject in subjects:
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
        refusals = _race(delivery, sending, str(record.outgoing_id))
        final = sending.outgoing.read(AGENT, str(record.outgoing_id))
        outcomes.append((subject, final.stage))
        assert refusals in ([], [Code.STATE_ALREADY_PASSED])
        assert (final.stage is Stage.CANCELLED) == (refusals == [])

    received = {s for s in subjects for m in smtp.received() if s.encode() in m.content}
    for subject, stage in outcomes:
        if stage is Stage.CANCELLED:
            assert subject not in received, "transmitted and recorded as cancelled"
        else:
            assert stage is Stage.SENT
            assert subject in received
    stages = [stage for _, stage in outcomes]
    print(f"cancelled {stages.count(Stage.CANCELLED)}, sent {stages.count(Stage.SENT)}")
