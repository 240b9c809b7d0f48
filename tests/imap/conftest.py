"""Fixtures of the IMAP adapter's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    """A second IMAP client acting behind the session's back."""
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()
