"""Access tokens that expire during a long synchronization: the server drops the session
between folders, every new session needs a fresh token, and the run finishes with every
message stored once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mailfathom.app.sync.synchronize_folder import FolderSynchronizer
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.folders import FolderRole
from oauth.mail_accounts import (
    counting_token_endpoint,
    grant,
    oauth_account_config,
    process_tokens_recorded,
    token_active,
)
from servers.dovecot import DovecotServer, ImapAccount
from servers.oauth import OAuthServer
from sync.helpers import open_services, sample, stored_rows
from waiting import wait_for

FOLDERS = ("INBOX", "Projects", "Receipts")
PER_FOLDER = 40
LIFETIME = 3


@pytest.fixture
def short_tokens(oauth_server: OAuthServer) -> Iterator[None]:
    oauth_server.set_access_token_lifetime(LIFETIME)
    yield
    oauth_server.set_access_token_lifetime(3600)


class DroppingAfterFolders:
    """The folder synchronizer, except that after each folder that stored mail (twice at
    most) the server drops the account's sessions and the test waits until the token the
    run logged in with has expired, so the rest of the pass needs a new one."""

    def __init__(
        self, inner: FolderSynchronizer, drop: Callable[[], None], drops: list[int]
    ) -> None:
        self._inner = inner
        self._drop = drop
        self._drops = drops

    def run(self, *args: Any, **kwargs: Any) -> Any:
        report = self._inner.run(*args, **kwargs)
        if report.stored and len(self._drops) < 2:
            self._drops.append(report.stored)
            self._drop()
        return report


@pytest.mark.soak
def test_a_synchronization_outliving_several_tokens_stores_every_message_once(
    tmp_path: Path,
    oauth_server: OAuthServer,
    oauth_dovecot: DovecotServer,
    oauth_imap_account: ImapAccount,
    short_tokens: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = oauth_imap_account.username
    for folder in FOLDERS[1:]:
        oauth_dovecot.create_folder(user, folder)
    for folder in FOLDERS:
        for number in range(PER_FOLDER):
            oauth_dovecot.save_message(user, sample(f"Ledger entry {folder} {number:03d}"), folder)
    client_id, refresh_file = grant(oauth_server, oauth_imap_account, tmp_path)
    mappings = tuple(
        FolderMapping(name, name, FolderRole.INBOX if name == "INBOX" else None) for name in FOLDERS
    )
    with (
        counting_token_endpoint(oauth_server.token_endpoint) as endpoint,
        process_tokens_recorded() as tokens,
    ):
        account: AccountConfig = oauth_account_config(
            oauth_imap_account,
            client_id,
            refresh_file,
            endpoint.url,
            folders=mappings,
            poll_interval_seconds=0.5,
        )
        assert account.oauth is not None
        credential = account.oauth

        def drop() -> None:
            held = tokens.current(account.account_id, credential)
            oauth_dovecot.disconnect_user(user)
            wait_for(lambda: not token_active(oauth_server, held), "the token to expire")

        drops: list[int] = []
        with open_services(tmp_path, account) as services:
            plain = services.folder_synchronizer
            monkeypatch.setattr(
                services,
                "folder_synchronizer",
                lambda a: DroppingAfterFolders(plain(a), drop, drops),
            )
            stop = threading.Event()
            run = threading.Thread(
                target=services.account_synchronizer().run_forever, args=(account, stop)
            )
            run.start()
            try:
                wait_for(
                    lambda: (
                        len(stored_rows(services, account.account_id)) == PER_FOLDER * len(FOLDERS)
                    ),
                    "every message to be stored",
                    timeout=120,
                )
            finally:
                stop.set()
                run.join(30)
            assert len(drops) == 2
            assert services.account_health() == []
            rows = stored_rows(services, account.account_id)
    assert len(rows) == PER_FOLDER * len(FOLDERS)
    # One token for the first session, and a new one after each drop outlived its token.
    assert endpoint.requests >= 3
    assert oauth_server.counts().get("refresh", 0) >= 3
