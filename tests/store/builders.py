"""Hand-built messages for store tests: the store sees normalized values, not MIME."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from log_audit import register
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.sync.types import FolderRecord, NewMessage
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import (
    HeaderRole,
    NormalizedMessage,
    PartDescription,
    Participant,
    PartKind,
)

BASE = datetime(2026, 2, 1, 8, 0, tzinfo=UTC)


def normalized(
    subject: str,
    *,
    message_id: str | None,
    references: tuple[str, ...] = (),
    body: str = "",
    sender: str = "sender@example.org",
    minutes: int = 0,
    parts: tuple[PartDescription, ...] = (),
    headers_only: bool = False,
) -> NormalizedMessage:
    register(subject, body, sender)
    return NormalizedMessage(
        subject=subject,
        sent_at=BASE + timedelta(minutes=minutes),
        message_id=message_id,
        in_reply_to=references[-1:],
        references=references,
        participants=(
            Participant(HeaderRole.FROM, sender, "Sender Name"),
            Participant(HeaderRole.TO, "Owner@Example.net", None),
        ),
        plain_text=body,
        html=None,
        parts=parts,
        markers=frozenset(),
        defects=(),
        headers_only=headers_only,
    )


def new_message(
    uid: int,
    message: NormalizedMessage,
    *,
    flags: RemoteFlags | None = None,
    key: str | None = None,
    state: ContentState = ContentState.STORED,
    size: int = 1000,
) -> NewMessage:
    return NewMessage(
        uid=uid,
        size_octets=size,
        flags=flags or RemoteFlags(),
        modseq=uid,
        received_at=BASE + timedelta(minutes=uid),
        normalized=message,
        content_state=state,
        content_key=key
        if key is not None
        else (f"{uid:064x}" if state is ContentState.STORED else None),
    )


ATTACHMENT = PartDescription(
    kind=PartKind.ATTACHMENT,
    file_name="report.pdf",
    name_was_normalized=False,
    media_type="application/pdf",
    size_octets=1234,
    part_path="2",
)


def inbox_and_junk(
    store: SqlSyncStore, account_id: str = "acct"
) -> tuple[FolderRecord, FolderRecord]:
    """An account's Inbox and its Junk-role folder, created as synchronization creates them."""
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )
    inbox = store.ensure_folder(account_id, FolderMapping("INBOX", "INBOX", FolderRole.INBOX))
    junk = store.ensure_folder(account_id, FolderMapping("Junk", "Junk", FolderRole.JUNK))
    return inbox, junk
