"""An account's `RemoteImages` choice decides what a content read's sanitized HTML loads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import RemoteImages
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services, stored_rows

_HTML = '<p>Spring offer <img src="https://cdn.example/shoe.png" alt="Red shoe"></p>'


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        (None, "<p>Spring offer <span>[image: Red shoe]</span></p>"),
        (RemoteImages.BLOCK, "<p>Spring offer <span>[image: Red shoe]</span></p>"),
        (
            RemoteImages.ALLOW,
            '<p>Spring offer <img src="https://cdn.example/shoe.png" alt="Red shoe"></p>',
        ),
    ],
)
def test_the_accounts_choice_decides_whether_remote_images_load(
    tmp_path: Path,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    choice: RemoteImages | None,
    expected: str,
) -> None:
    register("Spring offer", "Red shoe")
    remote.append(
        b"From: shop@example.org\r\nTo: reader@example.net\r\nSubject: Offer\r\n"
        b"Content-Type: text/html; charset=utf-8\r\n\r\n" + _HTML.encode()
    )
    account = (
        imap_account_config(imap_account)
        if choice is None
        else imap_account_config(imap_account, remote_images=choice)
    )
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        ids = [str(r.stored_email_id) for r in stored_rows(services, account.account_id)]
        read = services.reading().content.read(
            Caller(permissions=ALL_PERMISSIONS, label="reader"),
            ContentRequest(stored_email_ids=ids, include_sanitized_html=True),
        )
    content = read.emails[0].content
    assert content is not None
    assert content.body.sanitized_html is not None
    assert content.body.sanitized_html.text == expected
