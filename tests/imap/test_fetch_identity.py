"""Reading Message-IDs from a real Dovecot while another session expunges messages."""

from __future__ import annotations

from mailfathom.adapters.imap.session import ImapConnector
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, sample

_WITHOUT_MESSAGE_ID = b"From: sender@example.org\r\nSubject: Plain\r\n\r\nNo identity here.\r\n"


def test_a_message_expunged_by_another_session_is_absent_not_without_message_id(
    imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    kept = remote.append(sample("Kept", message_id="<kept@example.org>"))
    gone = remote.append(sample("Gone", message_id="<gone@example.org>"))
    plain = remote.append(_WITHOUT_MESSAGE_ID)
    session = ImapConnector().open(imap_account_config(imap_account))
    try:
        session.select("INBOX")
        # The session has not heard of the expunge yet: Dovecot answers this UID's FETCH
        # with RFC822.SIZE 0 and NIL for the header section before reporting it VANISHED.
        remote.expunge(gone)
        found = session.fetch_identity([kept, gone, plain])
    finally:
        session.close()
    assert found == {
        kept: ("kept@example.org", len(remote_message(remote, kept))),
        plain: (None, len(_WITHOUT_MESSAGE_ID)),
    }


def remote_message(remote: RemoteMailbox, uid: int) -> bytes:
    remote.conn.select("INBOX", readonly=True)
    typ, data = remote.conn.uid("FETCH", str(uid), "(BODY.PEEK[])")
    assert typ == "OK"
    (entry,) = [e for e in data if isinstance(e, tuple)]
    return bytes(entry[1])
