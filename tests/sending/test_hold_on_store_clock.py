"""The hold (`HoldSeconds`) is measured on one clock, the store's, whatever the clock of the
process that writes a send, withdraws it or delivers it: on PostgreSQL its `now()`, which
every machine shares; on SQLite the one machine's.

Two serving processes share the store, one whose clock is two minutes behind the store's and
one two minutes ahead, and each writes sends held 60 seconds (send_email, and send_draft of a
draft). A delivery pass of either right after finds nothing due; the sends withdrawn within
the window, by an agent and by the owner's console of the other process, never leave; the
others leave once when the window has passed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.sending.administer_outbox import Withdrawn
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.outgoing import OutgoingRecord, Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, StoreTime, sending_config

HOLD = 60
SKEW = timedelta(minutes=2)
RECIPIENT = "ann@example.net"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_a_held_send_waits_its_window_on_the_stores_clock_whatever_the_process_clock(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    smtp: SmtpServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = ""
    if backend == "postgresql":
        store = f'DatabaseUrl = "{request.getfixturevalue("migrated_postgres_url")}"'
    subjects = {
        name: f"Held send {name} {uuid.uuid4().hex[:8]}"
        for name in ("withdrawn-by-agent", "withdrawn-by-owner", "kept", "draft")
    }
    body = "Held for its window before it leaves.\n"
    register_all([*subjects.values(), body, RECIPIENT])
    monkeypatch.setenv("MAILFATHOM_TEST_SMTP_SECRET", SMTP_PASSWORD)
    config = load_config(
        sending_config(
            tmp_path,
            smtp,
            deployment=store,
            mail_delivery=f"HoldSeconds = {HOLD}\nRetryBaseSeconds = 30",
        )
    )
    clock = StoreTime(postgres=backend == "postgresql")

    def send(services: Services, name: str) -> OutgoingRecord:
        return services.sending().send.send(
            AGENT,
            SendRequest(
                account="work",
                to=[RECIPIENT],
                subject=subjects[name],
                plain_text_body=body,
                idempotency_key=name,
            ),
        )

    with (
        Services.open(config, clock=clock.process(-SKEW)) as behind,
        Services.open(config, migrate_schema=False, clock=clock.process(SKEW)) as ahead,
    ):
        started = clock.now()
        by_agent = send(behind, "withdrawn-by-agent")
        kept = send(behind, "kept")
        drafting = ahead.drafting()
        saved = drafting.save.save(
            AGENT,
            DraftRequest(
                plain_text_body=body, account="work", subject=subjects["draft"], to=[RECIPIENT]
            ),
        )
        drafted = drafting.send.send(AGENT, str(saved.draft_id))
        by_owner = send(ahead, "withdrawn-by-owner")

        passes = [
            s.delivery_pass(worker=name, tls_context=smtp.client_context)
            for name, s in (("behind", behind), ("ahead", ahead))
        ]
        assert [p.run_once().claimed for p in passes] == [0, 0], "a held send was taken at once"

        cancelled = ahead.sending().cancellation.cancel(AGENT, str(by_agent.outgoing_id))
        assert cancelled.stage is Stage.CANCELLED
        withdrawal = behind.console_outbox().withdraw(str(by_owner.outgoing_id))
        assert withdrawal is not None
        assert withdrawal.outcome is Withdrawn.NOW

        clock.wait_until(started + timedelta(seconds=HOLD + 1))
        reports = [p.run_once() for p in passes]
        assert sum(r.sent for r in reports) == 2, "a send did not leave once its window passed"
        assert [r.claimed for r in (p.run_once() for p in passes)] == [0, 0]

        stages = {
            name: behind.outbox().find(record.outgoing_id)
            for name, record in (
                ("withdrawn-by-agent", by_agent),
                ("withdrawn-by-owner", by_owner),
                ("kept", kept),
                ("draft", drafted),
            )
        }
    assert {n: r.stage if r else None for n, r in stages.items()} == {
        "withdrawn-by-agent": Stage.CANCELLED,
        "withdrawn-by-owner": Stage.CANCELLED,
        "kept": Stage.SENT,
        "draft": Stage.SENT,
    }
    received = [
        name
        for message in smtp.received()
        for name, subject in subjects.items()
        if subject.encode() in message.content
    ]
    assert sorted(received) == ["draft", "kept"]
