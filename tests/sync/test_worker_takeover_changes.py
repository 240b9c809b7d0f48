"""Owner changes recorded while the worker holding the account is dead are carried exactly
once by the worker that takes the account over: a flag change, a move, and a move the dead
holder had noted and issued to the server but not recorded as done. Dovecot is checked with a
second IMAP client; the store is one PostgreSQL."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.moves import SqlMoveLedger
from mailfathom.adapters.sql.schema import folders, messages, mutation_records
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, held_rows, sample, stored_rows
from sync.workers import holders, kill, start_worker, stop, write_config
from waiting import wait_for

pytestmark = [pytest.mark.timeout(300)]
AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    mailbox.conn.create("Archive")
    yield mailbox
    mailbox.close()


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        kill(process)


def _issue_move_as_the_dead_holder(
    services: Services, remote: RemoteMailbox, stored_email_id: str
) -> None:
    """What a holder does for a move up to the command, then dies: the record begun and
    noted (source UID, destination UIDVALIDITY and UIDNEXT), and UID MOVE sent."""
    ledger = SqlMoveLedger(services.engine, SqlSyncStore(services.engine))
    (record,) = [m for m in ledger.open_moves("a0") if str(m.stored_email_id) == stored_email_id]
    typ, data = remote.conn.status("Archive", "(UIDVALIDITY UIDNEXT)")
    assert typ == "OK"
    status = data[0].decode() if isinstance(data[0], bytes) else str(data[0])
    validity = int(re.search(r"UIDVALIDITY (\d+)", status).group(1))  # type: ignore[union-attr]
    uid_next = int(re.search(r"UIDNEXT (\d+)", status).group(1))  # type: ignore[union-attr]
    assert record.row_uid is not None
    now = datetime.now(UTC)
    ledger.begin([record.record_id], now)
    ledger.note(
        {record.record_id: (record.row_uidvalidity or 0, record.row_uid)}, (validity, uid_next), now
    )
    remote.conn.select("INBOX")
    typ, _ = remote.conn.uid("MOVE", str(record.row_uid), "Archive")
    assert typ == "OK"


def _states(services: Services) -> list[str]:
    with services.engine.connect() as c:
        return sorted(c.execute(sa.select(mutation_records.c.state)).scalars())


def _placement(services: Services) -> dict[str, str]:
    """Each stored message's subject and the folder its row names."""
    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(messages.c.subject, folders.c.remote_name).join(
                folders, folders.c.folder_id == messages.c.folder_id
            )
        )
        return {str(r.subject): str(r.remote_name) for r in rows}


def test_changes_recorded_while_the_holder_is_dead_are_carried_once_by_the_next(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    migrated_postgres_url: str,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    flagged = remote.append(sample("Flag me"))
    remote.append(sample("Move me"))
    remote.append(sample("Moved before the holder died"))
    config = write_config(tmp_path, migrated_postgres_url, [imap_account], archive=True)
    first = start_worker(config, "w1")
    processes.append(first)
    with Services.open(load_config(config)) as services:
        wait_for(lambda: len(held_rows(services, "a0")) == 3, "the first holder stored the mail")
        assert holders(services.engine) == {"a0": "w1"}
        kill(first)
        ids = {r.subject: str(r.stored_email_id) for r in held_rows(services, "a0")}
        services.flags().record(AGENT, FlagChangeRequest(ids["Flag me"], flagged=True))
        for subject in ("Move me", "Moved before the holder died"):
            services.organizer().organize(
                AGENT, OrganizeRequest(action="archive", stored_email_ids=[ids[subject]])
            )
        _issue_move_as_the_dead_holder(services, remote, ids["Moved before the holder died"])

        second = start_worker(config, "w2")
        processes.append(second)
        wait_for(
            lambda: _states(services) == ["completed"] * 3,
            "the next holder carried every change",
            timeout=60,
        )
        assert holders(services.engine) == {"a0": "w2"}
        inbox, archive = remote.flags(), remote.flags("Archive")
        assert list(inbox) == [flagged]
        assert "\\Flagged" in inbox[flagged]
        assert len(archive) == 2, "a move carried twice or not at all"
        subjects = sorted(
            re.search(rb"Subject: ([^\r\n]*)", m).group(1).decode()  # type: ignore[union-attr]
            for m in remote.messages("Archive")
        )
        assert subjects == ["Move me", "Moved before the holder died"]
        wait_for(
            lambda: (
                _placement(services)
                == {
                    "Flag me": "INBOX",
                    "Move me": "Archive",
                    "Moved before the holder died": "Archive",
                }
            ),
            "every stored row names where its message is, once",
        )
        assert len(stored_rows(services, "a0")) == 3
        assert stop(second) == 0
