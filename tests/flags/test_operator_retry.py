"""An operator's retry of a dead-lettered change, against the test Dovecot: the record goes
back to pending, the continuous run is woken at once, and a second client sees the change."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.app.flags.administer_mutations import Retried
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import SyncMode
from mailfathom.domain.mutations import MutationFailure, MutationState
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows
from waiting import wait_for

AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


def test_a_retried_change_wakes_the_continuous_run_and_reaches_the_server(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    uid = remote.append(sample("Retried by the operator"))
    # The polling interval is far beyond the deadline: only the retry can start the work.
    account = imap_account_config(
        imap_account, sync_mode=SyncMode.PUSH, poll_interval_seconds=3600.0
    )
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        (row,) = stored_rows(services, account.account_id)
        recorded = services.flags().record(
            AGENT, FlagChangeRequest(str(row.stored_email_id), seen=True)
        )
        (record,) = recorded.records
        remote.store(uid, "+FLAGS", "\\Flagged")
        sync.run_once(account)
        operator = services.mutations()
        dead = operator.find(record.record_id)
        assert dead is not None
        assert dead.state is MutationState.DEAD_LETTERED
        assert dead.last_error_code == MutationFailure.CHANGED_ON_SERVER
        stop = threading.Event()
        worker = threading.Thread(target=sync.run_forever, args=(account, stop), daemon=True)
        worker.start()
        try:
            # Let the run find nothing open and settle into its wait (an hour long).
            time.sleep(1.0)
            retry = operator.retry(record.record_id)
            assert retry is not None
            assert retry.outcome is Retried.NOW
            wait_for(
                lambda: "\\Seen" in remote.flags()[uid], "the retried change reached the server"
            )
            wait_for(
                lambda: (
                    getattr(operator.find(record.record_id), "state", None)
                    is MutationState.COMPLETED
                ),
                "the retried record completed",
            )
        finally:
            stop.set()
            worker.join(timeout=60)
        assert not worker.is_alive()
        ended = operator.find(record.record_id)
        assert ended is not None
        assert (ended.attempts, ended.last_error_code) == (1, None)
        assert "\\Flagged" in remote.flags()[uid]
