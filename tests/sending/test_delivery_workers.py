"""Two `mailfathom worker --role delivery` processes over one PostgreSQL outbox: every queued
send is transmitted once, by one of them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.schema import outgoing_emails
from mailfathom.app.sending.deliver_outgoing import PassReport
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.outgoing import Stage
from servers.smtp import SmtpServer
from waiting import wait_for

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, sending_config

SENDS = 8


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def test_two_delivery_workers_transmit_each_send_once(
    tmp_path: Path, smtp: SmtpServer, migrated_postgres_url: str
) -> None:
    config_path = sending_config(
        tmp_path,
        smtp,
        deployment=f'DatabaseUrl = "{migrated_postgres_url}"',
        mail_delivery="LeaseSeconds = 5\nRetryBaseSeconds = 0.05",
    )
    os.environ["MAILFATHOM_TEST_SMTP_SECRET"] = SMTP_PASSWORD
    env = {**os.environ, "SSL_CERT_FILE": str(smtp.ca_path)}
    subjects = [f"Worker round message {i:02d}" for i in range(SENDS)]
    register_all(subjects)
    config = load_config(config_path)
    with Services.open(config) as services:
        ids = [
            services.sending()
            .send.send(
                AGENT,
                SendRequest(
                    account="work",
                    to=["ann@example.net"],
                    subject=subject,
                    plain_text_body="Numbered so that each message can be counted.\n",
                    idempotency_key=subject,
                ),
            )
            .outgoing_id
            for subject in subjects
        ]
        smtp.set_rules(data_delay=0.2)
        workers = [
            subprocess.Popen(
                [
                    *(sys.executable, "-m", "mailfathom", "worker", "--config", str(config_path)),
                    *("--role", "delivery", "--id", name),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            for name in ("d1", "d2")
        ]
        try:
            wait_for(
                lambda: all(
                    (r := services.outbox().find(i)) is not None and r.stage is Stage.SENT
                    for i in ids
                ),
                "every send transmitted",
                timeout=120,
            )
        finally:
            for worker in workers:
                os.killpg(worker.pid, signal.SIGTERM)
            codes = [worker.wait(timeout=30) for worker in workers]
    assert codes == [0, 0]
    received: Counter[str] = Counter()
    for message in smtp.received():
        for subject in subjects:
            if subject.encode() in message.content:
                received[subject] += 1
    assert received == Counter(dict.fromkeys(subjects, 1))


def test_a_pass_whose_clock_runs_ahead_leaves_another_passs_live_claim_alone(
    tmp_path: Path, smtp: SmtpServer, migrated_postgres_url: str
) -> None:
    """Lease expiry is read on the store's clock: a machine whose clock is a day ahead does
    not take a send another worker is transmitting for one whose lease ran out."""
    config_path = sending_config(
        tmp_path,
        smtp,
        deployment=f'DatabaseUrl = "{migrated_postgres_url}"',
        mail_delivery="LeaseSeconds = 30\nRetryBaseSeconds = 0.05",
    )
    os.environ["MAILFATHOM_TEST_SMTP_SECRET"] = SMTP_PASSWORD
    subject = "Sent while another clock runs ahead"
    register_all([subject])
    config = load_config(config_path)
    ahead = datetime.now(UTC) + timedelta(days=1)
    with (
        Services.open(config) as services,
        Services.open(config, migrate_schema=False, clock=lambda: ahead) as skewed,
    ):
        request = SendRequest(
            account="work",
            to=["ann@example.net"],
            subject=subject,
            plain_text_body="Sent once.\n",
            idempotency_key=subject,
        )
        sent = services.sending().send.send(AGENT, request).outgoing_id
        smtp.set_rules(data_delay=3.0)
        tls = smtp.client_context
        first = services.delivery_pass(worker="here", tls_context=tls)
        reports: list[PassReport] = []
        transmitting = threading.Thread(target=lambda: reports.append(first.run_once()))
        transmitting.start()
        try:
            wait_for(lambda: _began(services, sent), "the first pass began transmitting")
            other = skewed.delivery_pass(worker="ahead", tls_context=tls).run_once()
        finally:
            transmitting.join(60)
        assert other.claimed == 0
        assert [(r.claimed, r.lease_lost) for r in reports] == [(1, 0)]
        found = services.outbox().find(sent)
        assert found is not None
        assert found.stage is Stage.SENT
    assert sum(subject.encode() in m.content for m in smtp.received()) == 1


def _began(services: Services, outgoing_id: uuid.UUID) -> bool:
    with services.engine.connect() as c:
        began = c.execute(
            sa.select(outgoing_emails.c.transmission_started_at).where(
                outgoing_emails.c.outgoing_id == outgoing_id
            )
        ).scalar_one()
    return began is not None


def test_a_stopped_pass_gives_back_the_sends_it_had_not_begun(
    tmp_path: Path, smtp: SmtpServer, migrated_postgres_url: str
) -> None:
    """Sends claimed under a long lease and not attempted when the pass is told to stop are
    queued again at once, their attempt uncounted, rather than held until the lease ends."""
    config_path = sending_config(
        tmp_path,
        smtp,
        deployment=f'DatabaseUrl = "{migrated_postgres_url}"',
        mail_delivery="LeaseSeconds = 3600",
    )
    os.environ["MAILFATHOM_TEST_SMTP_SECRET"] = SMTP_PASSWORD
    subjects = [f"Stopped pass message {i}" for i in range(3)]
    register_all(subjects)
    with Services.open(load_config(config_path)) as services:
        for subject in subjects:
            services.sending().send.send(
                AGENT,
                SendRequest(
                    account="work",
                    to=["ann@example.net"],
                    subject=subject,
                    plain_text_body="One of three.\n",
                    idempotency_key=subject,
                ),
            )
        smtp.set_rules(data_delay=1.0)
        stop = threading.Event()
        delivery = services.delivery_pass(tls_context=smtp.client_context)
        passing = threading.Thread(target=delivery.run_once, kwargs={"stop": stop}, daemon=True)
        passing.start()
        wait_for(lambda: _stages(services) == Counter({Stage.SENDING: 3}), "all three claimed")
        stop.set()
        passing.join(60)
        assert not passing.is_alive()
        assert _stages(services) == Counter({Stage.SENT: 1, Stage.QUEUED: 2})
        with services.engine.connect() as c:
            queued = c.execute(
                sa.select(outgoing_emails.c.lease_owner, outgoing_emails.c.attempt_count).where(
                    outgoing_emails.c.stage == Stage.QUEUED.value
                )
            ).all()
        assert [tuple(row) for row in queued] == [(None, 0), (None, 0)]


def _stages(services: Services) -> Counter[Stage]:
    return Counter(listed.record.stage for listed in services.outbox().listing(None))
