"""A draft promoted with a sendAfter, delivered to the test SMTP server: time driven through the
deployment's clock, so nothing is offered before the instant and exactly one message after it;
one withdrawn while it waits is never offered; and the delivery worker, idle on a long poll,
wakes for the instant instead of waiting out the poll."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.outgoing import Stage
from mailfathom.entrypoints.workers.delivery import idle_wait, run_delivery
from servers.smtp import SmtpServer
from waiting import wait_for

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment, sending_config
from .helpers import open_deployment as _open

SUBJECT = "The seed swap is on Sunday"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    register_all([SUBJECT])
    yield from _open(tmp_path, smtp, monkeypatch)


def _recipient() -> str:
    address = f"swap-{uuid.uuid4().hex[:10]}@example.net"
    register_all([address])
    return address


def _promoted(services: Services, recipient: str, send_after: str) -> uuid.UUID:
    uses = services.drafting()
    request = DraftRequest(
        plain_text_body="Bring what you have.", account="work", subject=SUBJECT, to=[recipient]
    )
    saved = uses.save.save(AGENT, request)
    return uses.send.send(AGENT, str(saved.draft_id), send_after).outgoing_id


def _arrived(smtp: SmtpServer, recipient: str) -> int:
    return sum(recipient in m.rcpt_tos for m in smtp.received())


def test_nothing_is_offered_before_the_instant_and_one_message_after_it(
    deployment: SendingDeployment,
) -> None:
    services, clock, smtp = deployment.services, deployment.clock, deployment.smtp
    assert smtp is not None
    held, withdrawn = _recipient(), _recipient()
    instant = clock.now + timedelta(hours=2)
    first = _promoted(services, held, instant.isoformat())
    second = _promoted(services, withdrawn, instant.isoformat())
    delivery = services.delivery_pass(tls_context=smtp.client_context)

    report = delivery.run_once()
    assert (report.claimed, report.due_in) == (0, 7200.0)
    clock.advance(7199)
    report = delivery.run_once()
    assert (report.claimed, report.due_in) == (0, 1.0)
    assert smtp.received() == []
    outcome = services.sending().cancellation.cancel(AGENT, str(second))
    assert outcome.stage is Stage.CANCELLED

    clock.advance(1)
    report = delivery.run_once()
    assert (report.claimed, report.sent, report.due_in) == (1, 1, None)
    clock.advance(3600)
    assert delivery.run_once().claimed == 0
    assert (_arrived(smtp, held), _arrived(smtp, withdrawn)) == (1, 0)
    assert len(smtp.received()) == 1
    record = services.sending().outgoing.read(AGENT, str(first))
    assert (record.stage, record.send_after) == (Stage.SENT, instant)


def test_an_idle_worker_waits_for_the_earliest_due_send_when_it_comes_before_the_poll() -> None:
    assert idle_wait(60.0, None) == 60.0
    assert idle_wait(60.0, 2.5) == 2.5
    assert idle_wait(5.0, 3600.0) == 5.0
    # A send reported due already is looked for again soon, not in a tight loop.
    assert idle_wait(60.0, 0.0) > 0


@pytest.fixture
def real_time(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    register_all(["me@example.org", "Mé Example", SMTP_PASSWORD, SUBJECT])
    monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
    services = Services.open(load_config(sending_config(tmp_path, smtp)))
    try:
        yield services
    finally:
        services.close()


def test_the_worker_hands_the_message_over_at_its_instant_not_at_the_next_poll(
    real_time: Services, smtp: SmtpServer
) -> None:
    """The worker polls once a minute; a send due a second after its first pass arrives long
    before the second poll would have found it."""
    recipient = _recipient()
    instant = datetime.now(UTC) + timedelta(seconds=1.5)
    _promoted(real_time, recipient, instant.isoformat())
    stop = threading.Event()
    worker = threading.Thread(
        target=run_delivery,
        args=(real_time, stop),
        kwargs={"interval": 60.0, "tls_context": smtp.client_context},
    )
    worker.start()
    try:
        wait_for(lambda: _arrived(smtp, recipient), "the message did not arrive", timeout=20)
        assert datetime.now(UTC) >= instant
    finally:
        stop.set()
        worker.join(timeout=30)
    assert not worker.is_alive()
    assert _arrived(smtp, recipient) == 1
