"""The test-side IMAP client reads the server's state, not answers it was sent unasked."""

from __future__ import annotations

import threading

from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, sample


def test_flags_hold_while_another_session_changes_them(imap_account: ImapAccount) -> None:
    reader = RemoteMailbox(imap_account)
    writer = RemoteMailbox(imap_account)
    uids = [writer.append(sample(f"m{n}")) for n in range(3)]
    stop = threading.Event()

    def toggle() -> None:
        # While the reader has INBOX selected, the server may tell it of each change unasked,
        # in a FETCH answer that names no UID, in the middle of the reader's own FETCH.
        while not stop.is_set():
            writer.store(uids[1], "+FLAGS", "\\Flagged")
            writer.store(uids[1], "-FLAGS", "\\Flagged")

    changing = threading.Thread(target=toggle)
    changing.start()
    try:
        for _ in range(300):
            assert sorted(reader.flags()) == uids
    finally:
        stop.set()
        changing.join()
        reader.close()
        writer.close()
