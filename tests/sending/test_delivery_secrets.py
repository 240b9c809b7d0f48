"""A delivery pass over several accounts when one of them cannot be used: its sends end at
once with their own failure code, and the other accounts' sends are delivered in the same
pass (real submission server)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
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
from mailfathom.app.sending.ports import SubmissionOutcome
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.domain.codes import Code, DeliveryCode
from mailfathom.domain.errors import Refusal
from mailfathom.domain.outgoing import RecipientState, Stage
from servers.smtp import SmtpServer

from .helpers import AGENT, SMTP_PASSWORD, SMTP_USER, SendingDeployment
from .helpers import open_deployment as _open

SUBJECT = "Minutes of the Tuesday meeting"


def _side_account(smtp: SmtpServer, secret_file: Path) -> str:
    return f"""
[[Accounts]]
Id = "side"
DisplayName = "Side project"
Kind = "local"
Addresses = ["side@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "side@example.org"

[Accounts.Delivery.Smtp]
Host = "127.0.0.1"
Port = {smtp.port}
Tls = "starttls"
Username = "{SMTP_USER}"
Secret = {{ File = "{secret_file}" }}
"""


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "side-smtp-password"
    path.write_text(SMTP_PASSWORD + "\n", "utf-8")
    return path


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, secret_file: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    smtp.clear()
    register_all([SUBJECT, "side@example.org", "ann@example.net", "bob@example.net"])
    yield from _open(tmp_path, smtp, monkeypatch, extra_accounts=_side_account(smtp, secret_file))


def _send(d: SendingDeployment, account: str, to: str, key: str) -> str:
    record = d.services.sending().send.send(
        AGENT,
        SendRequest(
            account=account,
            to=[to],
            subject=SUBJECT,
            plain_text_body="The minutes are below.\n",
            idempotency_key=key,
        ),
    )
    return str(record.outgoing_id)


def test_a_secret_gone_after_start_ends_that_accounts_sends_and_others_still_go(
    deployment: SendingDeployment, smtp: SmtpServer, secret_file: Path
) -> None:
    # The side account's sends are queued first, so they are claimed before the work one.
    side = [_send(deployment, "side", "ann@example.net", f"side-{n}") for n in range(2)]
    work = _send(deployment, "work", "bob@example.net", "work-1")
    secret_file.unlink()

    assert smtp.client_context is not None
    report = deployment.services.delivery_pass(tls_context=smtp.client_context).run_once()

    assert (report.claimed, report.sent, report.failed) == (3, 1, 2)
    outgoing = deployment.services.sending().outgoing
    for identifier in side:
        after = outgoing.read(AGENT, identifier)
        assert (after.stage, after.failure_code) == (Stage.FAILED, DeliveryCode.SECRET_UNREADABLE)
        assert after.attempt_count == 1
        assert [r.state for r in after.recipients] == [RecipientState.REFUSED]
        with pytest.raises(Refusal) as refused:
            deployment.services.sending().cancellation.cancel(AGENT, identifier)
        assert refused.value.code == Code.STATE_ALREADY_PASSED
    delivered = outgoing.read(AGENT, work)
    assert (delivered.stage, delivered.failure_code) == (Stage.SENT, None)
    (received,) = smtp.received()
    assert received.rcpt_tos == ["bob@example.net"]


class _FailingFor:
    """The real submission servers, except that offering `account_id`'s mail raises."""

    def __init__(self, real: SmtpTransports, account_id: str) -> None:
        self._real = real
        self._account_id = account_id

    def transport_for(self, account_id: str) -> _FailingFor | object | None:
        if account_id == self._account_id:
            return self
        return self._real.transport_for(account_id)

    def submit(
        self,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        raise RuntimeError("a failure nobody anticipated")


def test_an_unexpected_failure_of_one_send_leaves_the_others_to_finish(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    side = _send(deployment, "side", "ann@example.net", "side-1")
    work = _send(deployment, "work", "bob@example.net", "work-1")
    services = deployment.services
    peers = LocalPeerMailboxes(services.config, LocalConnector(services.config.store.data_dir))
    delivery = DeliveryPass(
        SqlOutbox(services.engine),
        _FailingFor(SmtpTransports(services.config, smtp.client_context), "side"),  # type: ignore[arg-type]
        peers,
        SentFolderCopies(services.config, peers, ImapConnector()),
        services.config.mail_delivery,
        clock=deployment.clock,
    )

    report = delivery.run_once()

    assert (report.claimed, report.sent, report.retried) == (2, 1, 1)
    outgoing = services.sending().outgoing
    waiting = outgoing.read(AGENT, side)
    assert (waiting.stage, waiting.failure_code) == (Stage.QUEUED, DeliveryCode.TEMPORARY_FAILURE)
    assert outgoing.read(AGENT, work).stage is Stage.SENT
    # Waiting again rather than held by a lease: it can still be withdrawn.
    assert services.sending().cancellation.cancel(AGENT, side).stage is Stage.CANCELLED
    assert len(smtp.received()) == 1
