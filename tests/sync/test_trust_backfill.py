"""A pass bringing more than a bounded number of messages leaves their readings to the
backfill, which reads them after it. Against Dovecot, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa

from fakes.trust import FakeAssessor, FakeVerifier
from mailfathom.adapters.sql.schema import message_trust
from mailfathom.app.sync.trust_backfill import TrustBackfill
from mailfathom.app.sync.trust_step import TrustPorts
from mailfathom.bootstrap import Services
from mailfathom.domain.authorship import NOT_ASSESSED, AuthorshipState
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import AuthorAuthentication
from servers.dovecot import ImapAccount
from waiting import wait_for

from .helpers import (
    RemoteMailbox,
    imap_account_config,
    open_services,
    sample,
    trust_by_subject,
)


def _with_no_inline_share(services: Services) -> None:
    """Every pass past the inline bound: no whole message is read inline."""
    wired = services.trust_ports

    def ports(account: AccountConfig) -> TrustPorts:
        return replace(wired(account), inline_messages=0)

    services.trust_ports = ports  # type: ignore[method-assign]


def _rows(services: Services) -> dict[str, tuple[object, object]]:
    return dict(trust_by_subject(services))


def _row_count(services: Services) -> int:
    with services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(message_trust)).scalar_one())


def _fill_mailbox(remote: RemoteMailbox) -> None:
    remote.append(b"X-Test-Verdict: authenticated\r\n" + sample("Signed"))
    remote.append(b"X-Test-Verdict: authenticated\r\n" + sample("Too large", body="x" * 5000))
    for i in range(24):
        remote.append(b"X-Test-Verdict: none\r\n" + sample(f"Plain {i}"))


def test_a_pass_past_the_bound_leaves_whole_messages_to_the_backfill(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, database_url: str | None
) -> None:
    _fill_mailbox(remote)
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account, database_url) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        _with_no_inline_share(services)
        services.account_synchronizer().run_once(account)
        # Only the message stored by its header block was read inline: it has no body.
        after_pass = _rows(services)
        assert set(after_pass) == {"Too large"}
        verdict, reading = after_pass["Too large"]
        assert verdict.author_authentication is AuthorAuthentication.AUTHENTICATED  # type: ignore[attr-defined]
        assert reading == NOT_ASSESSED

        backfill = services.trust_backfill()
        assert backfill.run_until_done(account) == 25
        assert backfill.run_until_done(account) == 0
        stored = _rows(services)
    assert len(stored) == 26
    signed_verdict, signed_reading = stored["Signed"]
    assert signed_verdict.author_authentication is AuthorAuthentication.AUTHENTICATED  # type: ignore[attr-defined]
    assert signed_reading.state is AuthorshipState.UNLIKELY  # type: ignore[attr-defined]


def test_a_pass_within_the_bound_reads_every_message_inline(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    _fill_mailbox(remote)
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        services.account_synchronizer().run_once(account)
        assert _row_count(services) == 26
        assert services.trust_backfill().run_until_done(account) == 0


def test_the_continuous_backfill_reads_what_a_pass_left(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    _fill_mailbox(remote)
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        _with_no_inline_share(services)
        services.account_synchronizer().run_once(account)
        assert _row_count(services) == 1
        backfill = TrustBackfill(
            services.reverification(), services.trust_ports, batch=5, idle_seconds=0.05
        )
        stop = threading.Event()
        worker = threading.Thread(target=backfill.run_forever, args=(account, stop))
        worker.start()
        try:
            wait_for(lambda: _row_count(services) == 26, "every message read", timeout=30)
        finally:
            stop.set()
            worker.join(timeout=10)
        assert not worker.is_alive()


def test_a_message_whose_content_is_gone_is_recorded_blank_and_not_asked_again(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.append(b"X-Test-Verdict: authenticated\r\n" + sample("Signed"))
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        _with_no_inline_share(services)
        services.account_synchronizer().run_once(account)
        for pack in services.config.store.content_dir.rglob("*"):
            if pack.is_file():
                pack.unlink()
        backfill = services.trust_backfill()
        assert backfill.run_until_done(account) == 1
        assert backfill.run_until_done(account) == 0
        ((verdict, reading),) = _rows(services).values()
    assert verdict.author_authentication is AuthorAuthentication.NOT_ESTABLISHED  # type: ignore[attr-defined]
    assert reading == NOT_ASSESSED


def test_the_bound_counts_the_new_messages_of_every_folder_the_pass_reached(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    remote.conn.create("Archive")
    for i in range(4):
        remote.append(b"X-Test-Verdict: none\r\n" + sample(f"Inbox {i}"))
    for i in range(3):
        remote.append(b"X-Test-Verdict: none\r\n" + sample(f"Archive {i}"), folder="Archive")
    folders = (
        FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
        FolderMapping("Archive", "Archive", FolderRole.ARCHIVE),
    )
    account = imap_account_config(imap_account, folders)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        wired = services.trust_ports

        def ports(account: AccountConfig) -> TrustPorts:
            return replace(wired(account), inline_messages=5)

        services.trust_ports = ports  # type: ignore[method-assign]
        services.account_synchronizer().run_once(account)
        # The inbox's 4 fit the bound; with the archive's 3 the pass brought 7.
        assert sorted(_rows(services)) == [f"Inbox {i}" for i in range(4)]
        assert services.trust_backfill().run_until_done(account) == 3


def test_a_one_off_backfill_told_to_stop_reads_no_further_batch(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    """A one-off run (after `mailfathom sync`'s pass) whose lease is lost stops between
    batches: what it would read next could not be recorded."""
    _fill_mailbox(remote)
    account = imap_account_config(imap_account, max_message_octets=3000)
    with open_services(tmp_path, account) as services:
        services.sender_verifier = FakeVerifier()
        services.authorship_assessor = FakeAssessor()
        _with_no_inline_share(services)
        services.account_synchronizer().run_once(account)
        backfill = TrustBackfill(services.reverification(), services.trust_ports, batch=5)
        stop = threading.Event()
        assert backfill.run_until_done(account, lambda _done: stop.set(), stop=stop) == 5
        assert _row_count(services) == 1 + 5
        assert backfill.run_until_done(account) == 20
