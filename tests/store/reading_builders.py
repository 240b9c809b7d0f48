"""Mailboxes for the read-side tests, filled only through the store's own writer."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

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
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
VALIDITY = 7


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def add_folder(
    store: SqlSyncStore,
    remote: str,
    *,
    account_id: str = "acct",
    alias: str | None = None,
    role: FolderRole | None = None,
    visible: bool = True,
) -> FolderRecord:
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )
    return store.ensure_folder(
        account_id, FolderMapping(remote, alias or remote, role, visible_to_tools=visible)
    )


@dataclass(frozen=True)
class Mail:
    """One message as a test describes it; `received` None means no INTERNALDATE."""

    subject: str | None
    received: datetime | None = T0
    sender: str = "sender@example.org"
    sender_name: str | None = "Sender Name"
    to: tuple[str, ...] = ("owner@example.net",)
    cc: tuple[str, ...] = ()
    body: str = ""
    html: str | None = None
    flags: RemoteFlags = field(default_factory=RemoteFlags)
    parts: tuple[PartDescription, ...] = ()
    message_id: str | None = None
    references: tuple[str, ...] = ()
    sent: datetime | None = T0
    state: ContentState = ContentState.STORED
    size: int = 1000
    # The content key (SHA-256 of the octets) of a message stored in several folders, which
    # its copies share; by default each message written has a key of its own.
    key: str | None = None

    def normalized(self) -> NormalizedMessage:
        people = (
            Participant(HeaderRole.FROM, self.sender, self.sender_name),
            *(Participant(HeaderRole.TO, a, None) for a in self.to),
            *(Participant(HeaderRole.CC, a, None) for a in self.cc),
        )
        return NormalizedMessage(
            subject=self.subject,
            sent_at=self.sent,
            message_id=self.message_id,
            in_reply_to=self.references[-1:],
            references=self.references,
            participants=people,
            plain_text=self.body,
            html=self.html,
            parts=self.parts,
            markers=frozenset(),
            defects=(),
            headers_only=self.state is not ContentState.STORED,
        )


def store_mail(store: SqlSyncStore, folder: FolderRecord, *mails: Mail, first_uid: int = 1) -> None:
    """Write `mails` in one batch, UIDs counting up from `first_uid` (so `seq` follows the
    order given)."""
    items = [
        NewMessage(
            uid=first_uid + i,
            size_octets=m.size,
            flags=m.flags,
            modseq=first_uid + i,
            received_at=m.received,
            normalized=m.normalized(),
            content_state=m.state,
            content_key=(m.key or f"{folder.folder_id:08x}{first_uid + i:056x}")
            if m.state is ContentState.STORED
            else None,
        )
        for i, m in enumerate(mails)
    ]
    store.add_messages(folder, VALIDITY, items, NOW)
