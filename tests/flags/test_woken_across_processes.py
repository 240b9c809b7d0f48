"""A change recorded by one process wakes a continuous synchronization run of another: the
deployment where `serve --no-sync` takes the calls and `sync --continuous` runs elsewhere.

The run's polling interval is an hour, so only the record itself can start the work; the
change must reach the test Dovecot (seen by a second, independent IMAP client) well before."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, held_rows, sample
from sync.workers import start_continuous_sync
from waiting import wait_for

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")
SECRET_ENV = "MF_WOKEN_TEST_IMAP_SECRET"


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    mailbox.conn.create("Archive")
    yield mailbox
    mailbox.close()


def _config(root: Path, account: ImapAccount, mode: str) -> Path:
    path = root / "mailfathom.toml"
    path.write_text(
        f"""[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "work"
Kind = "imap"
SyncMode = "{mode}"
PollIntervalSeconds = 3600

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ Env = "{SECRET_ENV}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Archive"
Role = "Archive"
""",
        "utf-8",
    )
    return path


@pytest.mark.parametrize("mode", ["push", "polling"])
def test_a_record_written_by_another_process_wakes_the_continuous_run(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, mode: str
) -> None:
    flagged = remote.append(sample("Flagged from elsewhere"))
    remote.append(sample("Archived from elsewhere"))
    os.environ[SECRET_ENV] = imap_account.password
    path = _config(tmp_path, imap_account, mode)
    config = load_config(path)
    (account,) = config.accounts
    with Services.open(config) as services:
        run = start_continuous_sync(path)
        try:
            wait_for(
                lambda: len(held_rows(services, account.account_id)) == 2,
                "the continuous run's first pass stored the mail",
            )
            ids = {
                r.subject: str(r.stored_email_id) for r in held_rows(services, account.account_id)
            }
            services.flags().record(
                AGENT, FlagChangeRequest(ids["Flagged from elsewhere"], flagged=True)
            )
            wait_for(
                lambda: "\\Flagged" in remote.flags()[flagged],
                "the change recorded here reached the server",
                timeout=30.0,
            )
            services.organizer().organize(
                AGENT,
                OrganizeRequest(
                    action="archive", stored_email_ids=[ids["Archived from elsewhere"]]
                ),
            )
            wait_for(
                lambda: len(remote.flags("Archive")) == 1 and len(remote.flags()) == 1,
                "the move recorded here reached the server",
                timeout=30.0,
            )
        finally:
            os.killpg(run.pid, signal.SIGTERM)
            try:
                run.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
        assert run.returncode == 0
