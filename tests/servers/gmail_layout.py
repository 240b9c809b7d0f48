"""A Dovecot account laid out as Gmail publishes a mailbox over IMAP.

Gmail keeps one copy of each message and lists it in a folder per label it carries: a
message labelled INBOX and Work is in INBOX, in Work and in `[Gmail]/All Mail`, byte for
byte the same. Its `[Gmail]/…` folders carry SPECIAL-USE attributes (RFC 6154; `\\Important`
is RFC 8457). Here each label's copy is saved separately with the same octets, which is what
an IMAP client of Gmail sees.
"""

from __future__ import annotations

import imaplib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime

from .dovecot import DovecotServer

ALL_MAIL = "[Gmail]/All Mail"
SENT_MAIL = "[Gmail]/Sent Mail"
STARRED = "[Gmail]/Starred"
IMPORTANT = "[Gmail]/Important"
SPECIAL_USE = {
    ALL_MAIL: "\\All",
    "[Gmail]/Drafts": "\\Drafts",
    IMPORTANT: "\\Important",
    SENT_MAIL: "\\Sent",
    "[Gmail]/Spam": "\\Junk",
    STARRED: "\\Flagged",
    "[Gmail]/Trash": "\\Trash",
}
LABEL = "Work"
OWNER = "owner@example.org"


def gmail_dovecot() -> Iterator[DovecotServer]:
    """A Dovecot server whose `[Gmail]/…` folders announce Gmail's SPECIAL-USE attributes
    once created (for a module- or session-scoped fixture)."""
    server = DovecotServer(special_use=SPECIAL_USE).start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class Letter:
    subject: str
    message_id: str
    raw: bytes
    labels: tuple[str, ...]
    # Gmail gives every copy the INTERNALDATE of the message (RFC 3501 section 2.3.3).
    received: datetime


def letter(
    subject: str,
    labels: Sequence[str],
    *,
    sender: str = "Rosa Lind <rosa@example.net>",
    to: str = OWNER,
    minutes: int = 0,
    answers: Letter | None = None,
    body: str = "",
) -> Letter:
    sent = datetime(2026, 3, 2, 9, tzinfo=UTC) + timedelta(minutes=minutes)
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(sent)
    message_id = f"<{re.sub('[^a-z0-9]+', '-', subject.lower())}@example.net>"
    message["Message-ID"] = message_id
    if answers is not None:
        message["In-Reply-To"] = answers.message_id
        message["References"] = answers.message_id
    message.set_content(body or f"{subject}.\n")
    return Letter(subject, message_id, bytes(message), tuple(labels), sent + timedelta(seconds=30))


def file_letters(server: DovecotServer, username: str, letters: Sequence[Letter]) -> None:
    """Create every folder of Gmail's layout and the label folder, then append each letter
    to each folder it is labelled with and to All Mail, as Gmail lists it."""
    for folder in (*SPECIAL_USE, LABEL):
        server.create_folder(username, folder)
    account = server.account(username)
    with imaplib.IMAP4(account.host, account.port, timeout=30) as imap:
        imap.login(account.username, account.password)
        for one in letters:
            for folder in dict.fromkeys((*one.labels, ALL_MAIL)):
                status, _ = imap.append(
                    f'"{folder}"', None, imaplib.Time2Internaldate(one.received), one.raw
                )
                if status != "OK":
                    raise RuntimeError(f"APPEND to {folder} was refused")
