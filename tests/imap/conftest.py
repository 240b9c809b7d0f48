"""Fixtures of the IMAP adapter's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.dovecot import DovecotServer, ImapAccount
from servers.dovecot_variants import dovecot_without
from sync.helpers import RemoteMailbox


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    """A second IMAP client acting behind the session's back."""
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


@pytest.fixture(scope="module")
def dovecot_without_esearch(dovecot: DovecotServer) -> Iterator[DovecotServer]:
    """Dovecot announcing neither ESEARCH (RFC 4731) nor the extensions built on it."""
    yield from dovecot_without(dovecot, "ESEARCH", "ESORT", "CONTEXT=SEARCH")


@pytest.fixture(params=["esearch", "plain search"])
def searching_dovecot(request: pytest.FixtureRequest, dovecot: DovecotServer) -> DovecotServer:
    """Dovecot as it comes (with ESEARCH), then Dovecot without ESEARCH."""
    if request.param == "esearch":
        return dovecot
    server: DovecotServer = request.getfixturevalue("dovecot_without_esearch")
    return server
