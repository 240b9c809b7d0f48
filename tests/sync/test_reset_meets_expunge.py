"""A UIDVALIDITY reset whose identity matching meets a message expunged by another session."""

from __future__ import annotations

from pathlib import Path

import pytest

from mailfathom.adapters.imap.session import ImapSession
from servers.dovecot import DovecotServer, ImapAccount

from .helpers import RemoteMailbox, imap_account_config, open_services, sample, stored_rows


def _without_message_id(raw: bytes) -> bytes:
    """The same message, of the same size, with its Message-ID line renamed away."""
    return raw.replace(b"Message-ID:", b"X-Other-Id:", 1)


def test_a_message_expunged_during_the_matching_takes_no_stored_identity(
    tmp_path: Path,
    dovecot: DovecotServer,
    imap_account: ImapAccount,
    remote: RemoteMailbox,
    body_fetches: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    going = sample("Going", message_id="<going@example.org>")
    remote.append(sample("Kept", message_id="<kept@example.org>"))
    remote.append(going)
    # Two messages without a Message-ID, removed before the reset: their stale rows are what a
    # message Dovecot answers NIL for would match if taken for one without a Message-ID. It
    # gives RFC822.SIZE 0 or the size it still knows, so one of each size.
    remote.append(_without_message_id(going))
    inbox = Path(dovecot.doveadm("mailbox", "path", "-u", imap_account.username, "INBOX").strip())
    (inbox / "new" / "1700000000.M1P1.empty").write_bytes(b"")
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        before = stored_rows(services, account.account_id)
        faceless = [r for r in before if r.message_id_header is None]
        (going_row,) = [r for r in before if r.message_id_header == "going@example.org"]
        assert sorted(r.size_octets for r in faceless) == [0, going_row.size_octets]
        for row in faceless:
            remote.expunge(row.uid)
        remote.close()
        dovecot.reset_uidvalidity(imap_account.username)

        original = ImapSession.search_uids
        expunged: list[int] = []

        def expunging_once(self: ImapSession) -> list[int]:
            """Another session expunges "Going" between the SEARCH and the FETCH."""
            uids = original(self)
            if not expunged:
                other = RemoteMailbox(imap_account)
                other.conn.select("INBOX")
                typ, data = other.conn.uid("SEARCH", "HEADER", "Message-ID", "going@example.org")
                assert typ == "OK"
                expunged.extend(int(uid) for uid in data[0].split())
                other.expunge(expunged[0])
                other.close()
            return uids

        monkeypatch.setattr(ImapSession, "search_uids", expunging_once)
        body_fetches.clear()
        report = sync.run_once(account).folders[0]
        assert len(expunged) == 1
        assert report.uidvalidity_reset
        assert report.rekeyed == 1
        assert body_fetches == []
        (row,) = stored_rows(services, account.account_id)
        kept = next(r for r in before if r.message_id_header == "kept@example.org")
        assert row.stored_email_id == kept.stored_email_id
