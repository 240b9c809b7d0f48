"""A continuously synchronized local account picks up mail delivered into its Maildir (by a
peer's delivery pass, in this process or another) within moments, not at its next poll: the
worker watches the folders' directories between polls."""

from __future__ import annotations

import threading
from email.message import EmailMessage
from pathlib import Path

import sqlalchemy as sa

from log_audit import register_all
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.sql.schema import messages
from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.folders import FolderRole
from waiting import wait_for

SUBJECTS = [f"Arrival number {n}" for n in range(3)]


def _message(subject: str) -> bytes:
    m = EmailMessage()
    m["From"] = "peer@team.example"
    m["To"] = "desk@team.example"
    m["Subject"] = subject
    m.set_content("Delivered while the worker waits.\n")
    return bytes(m)


def _stored(services: Services) -> int:
    with services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one())


def test_mail_delivered_to_a_local_folder_is_synchronized_before_the_next_poll(
    tmp_path: Path,
) -> None:
    register_all(SUBJECTS)
    account = AccountConfig(
        account_id="desk",
        display_name="Desk",
        kind=AccountKind.LOCAL,
        folders=(
            FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
            FolderMapping("Sent", "Sent", FolderRole.SENT),
        ),
        addresses=("desk@team.example",),
        poll_interval_seconds=3600,
    )
    data_dir = tmp_path / "data"
    config = DeploymentConfig(store=StoreConfig(data_dir=data_dir), accounts=(account,))
    with Services.open(config) as services:
        stop = threading.Event()
        worker = threading.Thread(
            target=services.account_synchronizer().run_forever, args=(account, stop), daemon=True
        )
        worker.start()
        try:
            # Once the first pass has run (it created the folders), each delivery is seen.
            inbox = LocalConnector(data_dir).folder("desk", "INBOX")
            wait_for(lambda: (inbox.path / "new").is_dir(), "the first pass did not run")
            for expected, subject in enumerate(SUBJECTS, start=1):
                target = inbox if expected != 2 else LocalConnector(data_dir).folder("desk", "Sent")
                target.deliver(_message(subject))
                wait_for(
                    lambda n=expected: _stored(services) == n,  # type: ignore[misc]
                    "a delivered message was not synchronized",
                    timeout=15,
                )
        finally:
            stop.set()
            worker.join(timeout=30)
        assert not worker.is_alive()


def test_a_run_that_ended_leaves_no_listener_behind(tmp_path: Path) -> None:
    """A worker claims, gives up and claims an account again many times over its life: each
    run stops listening for recorded changes when it ends, so listeners do not pile up."""
    account = AccountConfig(
        account_id="desk",
        display_name="Desk",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
        poll_interval_seconds=3600,
    )
    config = DeploymentConfig(store=StoreConfig(data_dir=tmp_path / "data"), accounts=(account,))
    with Services.open(config) as services:
        synchronizer = services.account_synchronizer()
        for _ in range(3):
            stop = threading.Event()
            run = threading.Thread(target=synchronizer.run_forever, args=(account, stop))
            run.start()
            wait_for(lambda: services.mutation_signal.listening("desk") == 1, "the run listens")
            stop.set()
            run.join(timeout=30)
            assert not run.is_alive()
            assert services.mutation_signal.listening("desk") == 0
