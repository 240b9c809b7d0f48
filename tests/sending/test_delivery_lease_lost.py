"""A delivery pass whose lease another worker took over while it was offering a send: nothing
is handed over, the send is left to the new holder, and the pass reports the send as lost
(the process's metrics count it). Real submission server, SQLite outbox."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.local.peers import LocalPeerMailboxes
from mailfathom.adapters.sent_folders import SentFolderCopies
from mailfathom.adapters.smtp.submission import SmtpTransports
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.sending.deliver_outgoing import DeliveryPass
from mailfathom.app.sending.ports import SubmissionOutcome, SubmissionTransport
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.outgoing import Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from .helpers import open_deployment as _open

SUBJECT = "Budget lines for the autumn"


@pytest.fixture
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    register_all([SUBJECT, "carla@example.net"])
    yield from _open(tmp_path, smtp, monkeypatch)


class _TakenOverFirst:
    """The real submission server, reached only after another worker recovered the send
    (its lease having run out, as after a stall) and claimed it for itself."""

    def __init__(self, real: SmtpTransports, take_over: Callable[[], None]) -> None:
        self._real = real
        self._take_over = take_over

    def transport_for(self, account_id: str) -> SubmissionTransport | None:
        self._inner = self._real.transport_for(account_id)
        return self if self._inner is not None else None

    def submit(
        self,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        self._take_over()
        assert self._inner is not None
        return self._inner.submit(envelope_from, recipients, mime, before_data)


def test_a_pass_whose_lease_was_taken_over_hands_nothing_over_and_reports_it_lost(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    services = deployment.services
    record = services.sending().send.send(
        AGENT,
        SendRequest(
            account="work",
            to=["carla@example.net"],
            subject=SUBJECT,
            plain_text_body="The figures follow.\n",
            idempotency_key="autumn",
        ),
    )
    outbox = SqlOutbox(services.engine)
    config = services.config.mail_delivery

    def take_over() -> None:
        later = deployment.clock() + timedelta(seconds=config.lease_seconds + 1)
        outbox.recover(later, later, config.max_attempts)
        assert len(outbox.claim("other-worker", later, config.lease_seconds, 10)) == 1

    peers = LocalPeerMailboxes(services.config, LocalConnector(services.config.store.data_dir))
    delivery = DeliveryPass(
        outbox,
        _TakenOverFirst(SmtpTransports(services.config, smtp.client_context), take_over),
        peers,
        SentFolderCopies(services.config, peers, ImapConnector()),
        config,
        clock=deployment.clock,
        worker="stalled-worker",
    )

    report = delivery.run_once()

    assert (report.claimed, report.sent, report.failed, report.retried) == (1, 0, 0, 0)
    assert report.lease_lost == 1
    assert smtp.received() == []
    assert services.sending().outgoing.read(AGENT, str(record.outgoing_id)).stage is Stage.SENDING
