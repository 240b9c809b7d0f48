"""Listing a folder whose UIDs would not fit on one answer line, on a real Dovecot with ESEARCH
and without: imaplib refuses lines longer than its limit, so the session asks in windows."""

from __future__ import annotations

import imaplib
import os
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mailfathom.adapters.imap.session import ImapConnector, ImapSession
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, sample

_FIRST_UID = 4_000_000_000  # ten digits: eleven bytes a UID on a SEARCH line
_IMAPLIB_LINE_LIMIT = 1_000_000
_BODY = b"From: sender@example.org\r\nSubject: Filler\r\n\r\nFiller.\r\n"


def _fill_inbox(server: DovecotServer, count: int) -> tuple[ImapAccount, list[int]]:
    """A new user whose INBOX holds `count` small messages with every other UID from
    `_FIRST_UID`, written straight into its Maildir with Dovecot's `dovecot-uidlist` (links
    to a few files: a directory entry each), then indexed by Dovecot."""
    suffix = uuid.uuid4().hex[:8]
    account = server.add_user(f"big-{suffix}", f"pw-{suffix}")
    server.doveadm("mailbox", "status", "-u", account.username, "messages", "INBOX")
    inbox = server.maildir(account.username) / "INBOX"
    uids = [_FIRST_UID + 2 * index for index in range(count)]
    lines = [f"3 V{_FIRST_UID} N{uids[-1] + 1}"]
    source = inbox / "tmp" / "filler"
    for index, uid in enumerate(uids):
        if index % 50_000 == 0:  # well below the file system's limit of links to one file
            source = inbox / "tmp" / f"filler-{index}"
            source.write_bytes(_BODY)
            os.chown(source, server.mail_uid, server.mail_gid)
        name = f"1700000000.M{index}P1.filler,S={len(_BODY)}"
        os.link(source, inbox / "cur" / f"{name}:2,")
        lines.append(f"{uid} :{name}")
    uidlist = inbox / "dovecot-uidlist"
    uidlist.write_text("\n".join(lines) + "\n", encoding="ascii")
    os.chown(uidlist, server.mail_uid, server.mail_gid)
    assert server.mailbox_status(account.username)["messages"] == count
    return account, uids


def _enforce(session: ImapSession, limit: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the session's connection refuse lines longer than `limit`, as imaplib does at its
    own limit; answers the length of each line read."""
    imap: Any = session._imap
    read: Callable[[], bytes] = imap.readline
    lengths: list[int] = []

    def readline() -> bytes:
        line = read()
        lengths.append(len(line))
        if len(line) > limit:
            raise imaplib.IMAP4.error(f"got more than {limit} bytes")
        return line

    monkeypatch.setattr(imap, "readline", readline)
    return lengths


def _open(account: ImapAccount, line_limit: int | None = None) -> ImapSession:
    connector = ImapConnector()
    if line_limit is not None:
        connector.line_limit = line_limit
    return connector.open(imap_account_config(account))


def test_a_folder_whose_uids_outgrow_one_answer_line_is_listed_whole(
    searching_dovecot: DovecotServer,
) -> None:
    # 95,000 UIDs of ten digits: a plain UID SEARCH ALL answer of about 1,045,000 bytes.
    account, uids = _fill_inbox(searching_dovecot, 95_000)
    assert len(uids) * 11 > _IMAPLIB_LINE_LIMIT
    session = _open(account)
    try:
        session.select("INBOX")
        assert session.search_uids() == uids
    finally:
        session.close()


def test_no_answer_line_outgrows_the_limit_the_session_plans_for(
    searching_dovecot: DovecotServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    account, uids = _fill_inbox(searching_dovecot, 3_000)
    expunged = uids[::3]  # scattered: no sequence-set compresses them
    remote = RemoteMailbox(account)
    try:
        remote.conn.select("INBOX")
        named = ",".join(str(uid) for uid in expunged)
        assert remote.conn.uid("STORE", named, "+FLAGS.SILENT", "(\\Deleted)")[0] == "OK"
        assert remote.conn.uid("EXPUNGE", named)[0] == "OK"
    finally:
        remote.close()
    session = _open(account, line_limit=4_000)
    lengths = _enforce(session, 4_000, monkeypatch)
    try:
        session.select("INBOX")
        assert session.search_uids() == [u for u in uids if u not in set(expunged)]
    finally:
        session.close()
    # The plain answer would have been about 22,000 bytes.
    assert max(lengths) <= 2_000


def test_a_windowed_listing_keeps_every_message_that_outlives_it(
    searching_dovecot: DovecotServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    account, uids = _fill_inbox(searching_dovecot, 1_000)
    remote = RemoteMailbox(account)
    session = _open(account, line_limit=2_000)
    _enforce(session, 2_000, monkeypatch)
    imap: Any = session._imap
    ask: Callable[..., Any] = imap.uid
    searches: list[str] = []
    # After the first window is answered, another session expunges a message already listed
    # and one not listed yet, and a message arrives.
    gone = [uids[1], uids[-2]]
    arrived: list[int] = []

    def uid(command: str, *args: str) -> Any:
        answer = ask(command, *args)
        if command == "SEARCH":
            searches.append(" ".join(args))
            if len(searches) == 1:
                for each in gone:
                    remote.expunge(each)
                arrived.append(remote.append(sample("Arrived while listing")))
        return answer

    monkeypatch.setattr(imap, "uid", uid)
    try:
        session.select("INBOX")
        listed = session.search_uids()
    finally:
        session.close()
        remote.close()
    assert len(searches) > 2
    kept = [u for u in uids if u not in gone]
    assert set(kept) | set(arrived) <= set(listed) <= set(uids) | set(arrived)
    # An expunged message may still be listed (Dovecot keeps it in the session's view until
    # it has reported the expunge): the next pass removes it. Only a kept one must never lack.
    assert listed == sorted(listed)
