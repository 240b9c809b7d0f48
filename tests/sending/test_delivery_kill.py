"""A delivery worker killed (SIGKILL) at random moments, again and again: no message the
server accepted is ever transmitted a second time, and no queued send is lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.outgoing import Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, sending_config

SENDS = 40
KILLS = 24


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def _worker(config: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """A delivery worker, returned once it has started its loop (its start-up is not what
    the kills are aimed at)."""
    argv = [sys.executable, "-m", "mailfathom", "deliver", "--config", str(config)]
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [*argv, "--interval", "0.05"], env=env, stdout=subprocess.DEVNULL, stderr=out
        )
    deadline = time.monotonic() + 60
    while b"delivery.started" not in log.read_bytes():
        assert worker.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, "the delivery worker did not start"
        time.sleep(0.02)
    return worker


@pytest.mark.soak
def test_killing_the_delivery_worker_never_sends_twice_and_never_loses_a_send(
    tmp_path: Path, smtp: SmtpServer
) -> None:
    config_path = sending_config(
        tmp_path,
        smtp,
        mail_delivery="LeaseSeconds = 2\nMaxAttempts = 50\nRetryBaseSeconds = 0.05",
    )
    env = {
        **os.environ,
        "MAILFATHOM_TEST_SMTP_SECRET": SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    os.environ["MAILFATHOM_TEST_SMTP_SECRET"] = SMTP_PASSWORD
    subjects = [f"Kill round message {i:02d}" for i in range(SENDS)]
    register_all(subjects)
    config = load_config(config_path)
    with Services.open(config) as services:
        sending = services.sending()
        ids = [
            sending.send.send(
                AGENT,
                SendRequest(
                    account="work",
                    to=["ann@example.net", "bob@example.net"],
                    subject=subject,
                    plain_text_body="Numbered so that each message can be counted.\n",
                    idempotency_key=subject,
                ),
            ).outgoing_id
            for subject in subjects
        ]
    # The server keeps each message and answers it late, so kills land between "kept" and
    # "answered" as well as everywhere else.
    smtp.set_rules(data_delay=0.4)
    rng = random.Random(20261130)
    for round_ in range(KILLS):
        worker = _worker(config_path, env, tmp_path / f"worker-{round_}.log")
        time.sleep(rng.uniform(0.0, 1.2))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)

    # Then one worker runs undisturbed until every send has ended.
    smtp.set_rules()
    worker = _worker(config_path, env, tmp_path / "worker-last.log")
    try:
        deadline = time.monotonic() + 120
        while True:
            with Services.open(config) as services:
                records = [services.outbox().find(i) for i in ids]
            if all(r is not None and r.stage in (Stage.SENT, Stage.FAILED) for r in records):
                break
            assert time.monotonic() < deadline, "sends still waiting after two minutes"
            time.sleep(0.5)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)

    received: Counter[str] = Counter()
    for message in smtp.received():
        for subject in subjects:
            if subject.encode() in message.content:
                received[subject] += 1
    assert max(received.values(), default=0) <= 1, "a message was transmitted twice"
    for subject, record in zip(subjects, records, strict=True):
        assert record is not None
        if record.stage is Stage.SENT:
            assert received[subject] == 1
        else:
            # Ended while its outcome was unknown: never offered again (0 or 1 copies).
            assert record.failure_code == DeliveryCode.OUTCOME_UNKNOWN
    sent = sum(r is not None and r.stage is Stage.SENT for r in records)
    interrupted = sum(r is not None and r.attempt_count > 1 for r in records)
    print(
        f"sent {sent}, outcome unknown {SENDS - sent}, received {sum(received.values())}, "
        f"attempted more than once {interrupted}"
    )
    # The kills landed inside attempts, not only between them.
    assert interrupted + (SENDS - sent) >= 3
