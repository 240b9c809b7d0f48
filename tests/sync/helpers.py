"""Building a deployment around a test Dovecot account."""

from __future__ import annotations

import contextlib
import imaplib
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from imapclient.response_parser import parse_fetch_response

from log_audit import register
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.sql.schema import folders, messages
from mailfathom.adapters.sql.trust_rows import load_trust
from mailfathom.bootstrap import Services
from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    ImapConnection,
    SecretRef,
    StoreConfig,
    SyncMode,
    TlsMode,
)
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import SenderVerdict
from servers.dovecot import ImapAccount


def imap_account_config(
    account: ImapAccount,
    folders: Sequence[FolderMapping] = (FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
    **overrides: Any,
) -> AccountConfig:
    env = f"MF_TEST_SECRET_{uuid.uuid4().hex[:8].upper()}"
    os.environ[env] = account.password
    base = AccountConfig(
        account_id=f"acct-{uuid.uuid4().hex[:8]}",
        display_name="Test account",
        kind=AccountKind.IMAP,
        folders=tuple(folders),
        imap=ImapConnection(
            host=account.host,
            port=account.port,
            username=account.username,
            secret=SecretRef(env=env),
            tls=TlsMode.NONE,
            timeout_seconds=30,
        ),
        sync_mode=SyncMode.POLLING,
    )
    return replace(base, **overrides)


def deployment(
    tmp_path: Path,
    account: AccountConfig,
    database_url: str | None = None,
) -> DeploymentConfig:
    return DeploymentConfig(
        store=StoreConfig(data_dir=tmp_path / "data", database_url=database_url),
        accounts=(account,),
    )


def open_services(
    tmp_path: Path,
    account: AccountConfig,
    database_url: str | None = None,
) -> Services:
    return Services.open(deployment(tmp_path, account, database_url))


def sample(
    subject: str,
    *,
    body: str = "Hello there.\n",
    message_id: str | None = None,
    in_reply_to: str | None = None,
    references: str | None = None,
) -> bytes:
    message = EmailMessage()
    message["From"] = "Sender Person <sender@example.org>"
    message["To"] = "receiver@example.net"
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    message["Message-ID"] = message_id or make_msgid(domain="example.org")
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    if references:
        message["References"] = references
    message.set_content(body)
    register(subject, body, "sender@example.org", "receiver@example.net", "Sender Person")
    return bytes(message)


def uid_fetch(conn: imaplib.IMAP4, uids: str, items: str) -> dict[int, dict[bytes, Any]]:
    """UID FETCH `items` (which must name UID), parsed, keyed by UID. While a mailbox is
    selected the server may report other sessions' changes unasked, as FETCH answers that name
    no UID, even in the middle of this command's own answers: those are left out."""
    conn.response("FETCH")  # answers held from earlier commands
    typ, data = conn.uid("FETCH", uids, f"({items})")
    assert typ == "OK", data
    parsed = parse_fetch_response([entry for entry in data if entry is not None], False, False)
    return {int(answer[b"UID"]): dict(answer) for answer in parsed.values() if b"UID" in answer}


class RemoteMailbox:
    """A second IMAP client acting behind the synchronizer's back."""

    def __init__(self, account: ImapAccount) -> None:
        self.conn = imaplib.IMAP4(account.host, account.port)
        self.conn.login(account.username, account.password)

    def append(self, raw: bytes, folder: str = "INBOX", flags: str = "") -> int:
        typ, data = self.conn.append(folder, f"({flags})" if flags else None, None, raw)
        assert typ == "OK", data
        text = data[0].decode()
        # [APPENDUID <uidvalidity> <uid>] (RFC 4315)
        return int(text.split("APPENDUID", 1)[1].split()[1].rstrip("]"))

    def store(self, uid: int, command: str, flags: str, folder: str = "INBOX") -> None:
        self.conn.select(folder)
        typ, _ = self.conn.uid("STORE", str(uid), command, f"({flags})")
        assert typ == "OK"

    def expunge(self, uid: int, folder: str = "INBOX") -> None:
        self.store(uid, "+FLAGS.SILENT", "\\Deleted", folder)
        typ, _ = self.conn.uid("EXPUNGE", str(uid))
        assert typ == "OK"

    def flags(self, folder: str = "INBOX") -> dict[int, str]:
        self.conn.select(folder, readonly=True)
        return {
            uid: " ".join(flag.decode() for flag in items[b"FLAGS"])
            for uid, items in uid_fetch(self.conn, "1:*", "UID FLAGS").items()
        }

    def messages(self, folder: str = "INBOX") -> list[bytes]:
        """Every message of `folder`, whole, read without setting \\Seen."""
        typ, _ = self.conn.select(folder, readonly=True)
        assert typ == "OK"
        typ, data = self.conn.uid("FETCH", "1:*", "(BODY.PEEK[])")
        assert typ == "OK"
        return [entry[1] for entry in data if isinstance(entry, tuple)]

    def close(self) -> None:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            self.conn.logout()


def stored_rows(services: Services, account_id: str) -> list[sa.Row[Any]]:
    with services.engine.connect() as c:
        return list(
            c.execute(
                sa.select(messages)
                .where(messages.c.account_id == account_id)
                .order_by(messages.c.folder_id, messages.c.uid)
            )
        )


def held_rows(services: Services, account_id: str) -> list[sa.Row[Any]]:
    """The stored rows the tools answer to: those of the UIDVALIDITY their folder's pass has
    recorded. A continuous run commits a batch's rows before the pass records the folder's
    progress, so right after the first batch `stored_rows` has rows no tool can name yet."""
    with services.engine.connect() as c:
        return list(
            c.execute(
                sa.select(messages)
                .join(folders, folders.c.folder_id == messages.c.folder_id)
                .where(
                    messages.c.account_id == account_id,
                    messages.c.uidvalidity == folders.c.uidvalidity,
                )
                .order_by(messages.c.folder_id, messages.c.uid)
            )
        )


def packs(services: Services) -> PackContentStore:
    """The deployment's content store, which a test that reaches into packs needs them to be."""
    assert isinstance(services.content, PackContentStore)
    return services.content


def damage_content(content: object, key: str | None) -> None:
    """Overwrite the first octet of a stored message, as a failing disk would."""
    assert isinstance(content, PackContentStore)
    assert key is not None
    location = content.locate(key)
    assert location is not None
    with location.path.open("r+b") as pack:
        pack.seek(location.offset)
        first = pack.read(1)
        pack.seek(location.offset)
        pack.write(b"Y" if first != b"Y" else b"Z")


def trust_by_subject(services: Services) -> dict[str, tuple[SenderVerdict, AuthorshipReading]]:
    """The stored verdict and reading of each message that has them, by its subject."""
    with services.engine.connect() as c:
        rows = c.execute(sa.select(messages.c.account_id, messages.c.seq, messages.c.subject))
        by_account: dict[str, dict[int, str]] = {}
        for account_id, seq, subject in rows:
            by_account.setdefault(account_id, {})[seq] = subject
        return {
            subjects[seq]: value
            for account_id, subjects in by_account.items()
            for seq, value in load_trust(c, account_id, [list(subjects)]).items()
        }
