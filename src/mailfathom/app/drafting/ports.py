"""Ports of the drafting side: where drafts are held, and the owner's drafts folder.

A draft is written here first and its mailbox copy follows over a network round trip, so a
server that refuses or never answers costs the copy, never the draft: the store knows which
revision has a copy and where it stands, and what is missing is finished by a later pass.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.files.references import AttachmentReference
from mailfathom.app.shared.files import Attachment
from mailfathom.domain.access import Caller
from mailfathom.domain.drafts import (
    Answering,
    AppendMark,
    CopyPlace,
    Draft,
    DraftFile,
    DraftRecipient,
    PendingAppend,
)


@dataclass(frozen=True, slots=True)
class DraftContent:
    """One revision's message as a use case settled and composed it."""

    account_id: str
    answering: Answering | None
    answered_email_id: uuid.UUID | None
    message_id: str
    mime: bytes
    body_characters: int
    recipients: tuple[DraftRecipient, ...]
    saved_at: datetime
    files: tuple[DraftFile, ...] = ()


@dataclass(frozen=True, slots=True)
class NewDraft:
    draft_id: uuid.UUID
    caller: str
    retry_key: str
    content: DraftContent


@dataclass(frozen=True, slots=True)
class CopyWork:
    """What an account's drafts folder still needs: current revisions with no copy yet, and
    copies to take out (superseded by a later revision, of a draft given up, or of a draft
    whose message has been sent). `to_settle` are drafts, whatever their life, with an
    append whose answer never came (`Draft.pending_append`)."""

    to_file: tuple[Draft, ...]
    to_remove: tuple[tuple[uuid.UUID, int, CopyPlace], ...]
    to_settle: tuple[Draft, ...] = ()


class DraftStore(Protocol):
    """Where drafts are held. A draft is marked sent only by the outbox, in the transaction
    that writes its send (`OutboxStore.record` with `promoting`), which dismisses the draft's
    owner alert too."""

    def create(self, new: NewDraft) -> tuple[Draft, bool]:
        """Write a draft at revision one, unless a draft not given up already holds the same
        retry key: answer the draft that stands and whether this call wrote it. The key is
        unique by a constraint, so racing identical calls leave one draft."""
        ...

    def find(self, draft_id: uuid.UUID) -> Draft | None:
        """The draft, whatever its life (live, deleted, sent), or None."""
        ...

    def revise(
        self, draft_id: uuid.UUID, content: DraftContent, revision: int | None = None
    ) -> Draft | None:
        """Replace the message of a live draft of the same account (and still at
        `revision`, when given) and count one revision, in one conditional statement; None
        when no such live draft is held."""
        ...

    def mark_deleted(
        self, draft_id: uuid.UUID, at: datetime, revision: int | None = None
    ) -> Draft | None:
        """Give up a live draft (still at `revision`, when given; and free its retry key)
        and dismiss its owner alert as of `at`, in one transaction: a draft given up waits
        for nobody. None when no such live draft was held."""
        ...

    def find_sent(self, outgoing_id: uuid.UUID) -> Draft | None:
        """The draft promoted to the send `outgoing_id`, or None."""
        ...

    def claim_filing(self, draft_id: uuid.UUID, now: datetime, until: datetime) -> bool:
        """Take the right to append the draft's copy until `until`, in one conditional
        statement: False while another call or pass holds an unexpired claim, so two of them
        never append the same revision twice. A claim its holder never released (a crash)
        lapses at `until`."""
        ...

    def release_filing(self, draft_id: uuid.UUID) -> None: ...

    def record_copy(self, draft_id: uuid.UUID, revision: int, place: CopyPlace) -> None:
        """Note that the copy of `revision` stands at `place`. Idempotent."""
        ...

    def note_append(self, draft_id: uuid.UUID, pending: PendingAppend) -> None:
        """Write down, before the APPEND is sent, which revision's copy is about to be
        appended and where it will land, replacing any earlier note. Idempotent."""
        ...

    def settle_append(self, draft_id: uuid.UUID, revision: int, place: CopyPlace | None) -> None:
        """The append of `revision` is over: its copy stands at `place` (recorded as
        `record_copy` records it), or it never landed (None). A note of that revision is
        cleared in the same transaction. Idempotent."""
        ...

    def forget_copy(self, draft_id: uuid.UUID, revision: int) -> None:
        """The copy of `revision` is out of the folder (or left behind for good)."""
        ...

    def copy_work(self, account_id: str) -> CopyWork:
        """What the account's drafts folder still needs (see `CopyWork`)."""
        ...


class CopyRefused(Exception):
    """The mail server answered and refused (a folder that is not there, a UIDVALIDITY that
    changed, a server without UIDPLUS, a quota): asking again the same way will not help."""


class CopyUnreachable(Exception):
    """The mailbox could not be reached or the connection was lost: a later pass may do it."""


class DraftFolders(Protocol):
    def drafts_folder(self, account_id: str) -> str | None:
        """The name of the folder the account maps to the drafts role, or None."""
        ...

    def append(
        self,
        account_id: str,
        folder: str,
        mime: bytes,
        name: str,
        noting: Callable[[AppendMark], None],
    ) -> CopyPlace:
        """Put a copy flagged \\Draft into `folder` and answer where it stands. `name` is a
        file name a local folder may use, and makes a repeated local write one file. For an
        IMAP folder `noting` is given the mark (`AppendMark`) before the APPEND is sent, so a
        copy whose answer is lost can be found again (`find_copy`); nothing is appended if
        `noting` raises. Raises `CopyRefused` or `CopyUnreachable`."""
        ...

    def find_copy(self, account_id: str, mark: AppendMark, message_id: str) -> CopyPlace | None:
        """The copy an APPEND noted at `mark` left, found by its Message-ID among the
        messages from the mark's UID on, the lowest first; None when none is there (or the
        folder's UIDVALIDITY changed since, which leaves nothing of it to name). Raises
        `CopyRefused` or `CopyUnreachable`."""
        ...

    def remove(self, account_id: str, place: CopyPlace) -> None:
        """Take out exactly that copy (by UID, in that UIDVALIDITY; never any other message).
        A copy already gone is removed. Raises `CopyRefused` or `CopyUnreachable`."""
        ...


class AttachmentResolving(Protocol):
    def resolve(
        self,
        caller: Caller,
        references: Sequence[AttachmentReference],
        carried: Sequence[Attachment] = (),
    ) -> tuple[Attachment, ...]:
        """The files `references` name, their octets read now and frozen, held with
        `carried` to the count and size bounds. Raises the refusal a file earns (51014 naming
        the bound, 51018, 53002, 53011, 56004) before anything is written."""
        ...
