"""`mfctl mailbox reverify`: stored mail verified and assessed again through the same ports,
resuming after an interruption from the position it recorded. On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from rich.console import Console

from fakes.trust import FakeAssessor, FakeVerifier
from mailfathom.adapters.sql.schema import message_trust, messages
from mailfathom.adapters.sql.trust_records import SqlTrustRecords
from mailfathom.adapters.sql.trust_rows import load_trust
from mailfathom.app.sync.reverify import StoredMailReverification
from mailfathom.bootstrap import Services
from mailfathom.domain.authorship import AuthorshipState
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.sender_verdict import AuthorAuthentication
from mailfathom.entrypoints.cli.reverify import reverify_with_progress
from servers.dovecot import ImapAccount

from .helpers import RemoteMailbox, imap_account_config, open_services, sample


class Interrupted(BaseException):
    """What Ctrl-C raises in the middle of a run, stood in for."""


class InterruptingVerifier(FakeVerifier):
    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def verify(self, raw: bytes, *, headers_only: bool, trusted_authserv_ids: frozenset[str]):  # type: ignore[no-untyped-def]
        if len(self.asked) == self.after:
            raise Interrupted
        return super().verify(
            raw, headers_only=headers_only, trusted_authserv_ids=trusted_authserv_ids
        )


def _seqs_with_rows(services: Services) -> set[int]:
    with services.engine.connect() as c:
        return set(c.execute(sa.select(message_trust.c.seq)).scalars())


def _seqs(services: Services) -> list[int]:
    with services.engine.connect() as c:
        return list(c.execute(sa.select(messages.c.seq).order_by(messages.c.seq)).scalars())


def test_an_interrupted_reverification_resumes_after_the_last_batch_it_recorded(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, database_url: str | None
) -> None:
    for i in range(10):
        marked = b"X-Test-Verdict: authenticated\r\n" + sample(f"Stored {i}")
        remote.append(marked)
    remote.append(sample("Too large", body="x" * 5000 + "\n"))
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account, database_url) as services:
        # Stored before anything verified or assessed: no port wired.
        services.sender_verifier = None
        services.authorship_assessor = None
        services.account_synchronizer().run_once(account)
        assert _seqs_with_rows(services) == set()
        seqs = _seqs(services)
        assert len(seqs) == 11
        reverify = StoredMailReverification(
            SqlTrustRecords(services.engine),
            services.content,
            services.preparer.message,
            clock=services.clock,
            batch=4,
        )
        records = SqlTrustRecords(services.engine)

        services.sender_verifier = InterruptingVerifier(after=6)
        services.authorship_assessor = FakeAssessor()
        with pytest.raises(Interrupted):
            reverify.run(account.account_id, services.trust_ports(account))
        # The first batch committed with its position; the second never did.
        assert records.position(account.account_id) == seqs[3]
        assert _seqs_with_rows(services) == set(seqs[:4]) - {seqs[-1]}

        verifier = FakeVerifier()
        services.sender_verifier = verifier
        progress: list[tuple[int, int]] = []
        report = reverify.run(
            account.account_id,
            services.trust_ports(account),
            lambda done, total: progress.append((done, total)),
        )
        assert report.resumed_after == 4
        assert len(verifier.asked) == 6
        assert report.reverified == 6
        assert report.without_content == 1
        assert progress[0] == (4, 11)
        assert progress[-1] == (11, 11)
        assert records.position(account.account_id) is None
        with services.engine.connect() as c:
            stored = load_trust(c, account.account_id, [seqs])
        assert set(stored) == set(seqs) - {seqs[-1]}
        for verdict, reading in stored.values():
            assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED
            assert reading.state is AuthorshipState.UNLIKELY


def test_a_complete_run_starts_over_and_replaces_what_was_stored(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.append(b"X-Test-Verdict: failed\r\n" + sample("Forged"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.account_synchronizer().run_once(account)
        services.authorship_assessor = FakeAssessor()
        console = Console(record=True, width=200)
        first = reverify_with_progress(services, account, console)
        second = reverify_with_progress(services, account, console)
        assert (first.reverified, second.reverified) == (1, 1)
        assert second.resumed_after == 0
        (seq,) = _seqs(services)
        with services.engine.connect() as c:
            ((verdict, reading),) = load_trust(c, account.account_id, [[seq]]).values()
        assert verdict.author_authentication is AuthorAuthentication.FAILED
        assert reading.state is AuthorshipState.UNLIKELY
        assert "1 message(s) verified and assessed again" in console.export_text()


def test_without_a_port_reverification_says_so_with_its_code(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = None
        services.authorship_assessor = None
        with pytest.raises(MailFathomError) as refused:
            reverify_with_progress(services, account, Console(record=True))
    assert refused.value.code == int(CommandCode.NO_TRUST_PORTS)


@pytest.mark.parametrize("switched_off", ["verifier", "assessor"])
def test_a_reading_whose_port_is_switched_off_keeps_what_was_stored(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    database_url: str | None,
    switched_off: str,
) -> None:
    """A verdict reached when the mail arrived may never be reached again (its signing key
    rotated away), so a run that verifies nothing must not erase it, nor a reading it did not
    read again."""
    remote.append(b"X-Test-Verdict: authenticated\r\n" + sample("Signed", body="generated\n"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account, database_url) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        services.account_synchronizer().run_once(account)
        (seq,) = _seqs(services)
        with services.engine.connect() as c:
            synchronized = load_trust(c, account.account_id, [[seq]])[seq]
        assert synchronized[0].author_authentication is AuthorAuthentication.AUTHENTICATED
        assert synchronized[1].state is AuthorshipState.LIKELY

        setattr(services, "sender_verifier" if switched_off == "verifier" else
                "authorship_assessor", None)  # fmt: skip
        report = reverify_with_progress(services, account, Console(record=True))

        assert report.reverified == 1
        with services.engine.connect() as c:
            assert load_trust(c, account.account_id, [[seq]])[seq] == synchronized
