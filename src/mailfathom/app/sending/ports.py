"""Ports of the sending side: the outbox, the composer, and what a delivery pass talks to.

The outbox is the only place a send exists. A sending tool writes a record and its composed
message in one transaction and transmits nothing; a delivery pass claims records under a
lease, and everything it learns is written back to the record.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.shared.files import Attachment
from mailfathom.domain.outgoing import OutgoingKind, OutgoingRecord, Recipient, Stage


@dataclass(frozen=True, slots=True)
class NewOutgoing:
    """A send as a sending tool writes it down. `send_after`: the instant the caller asked
    it to wait for (None: as soon as the record's `not_before` allows)."""

    outgoing_id: uuid.UUID
    account_id: str
    idempotency_key: str
    caller: str
    kind: OutgoingKind
    queued_at: datetime
    not_before: datetime
    message_id: str
    envelope_from: str
    mime: bytes
    recipients: tuple[Recipient, ...]
    send_after: datetime | None = None


@dataclass(frozen=True, slots=True)
class CeilingLimit:
    """At most `limit` sends queued in the `window_seconds` before now, counted for the
    account (`account_id`), for one caller (`caller`), or for the installation (neither).
    `name` is what a refusal says was reached."""

    name: str
    limit: int
    window_seconds: float
    account_id: str | None = None
    caller: str | None = None


class CeilingReached(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass(frozen=True, slots=True)
class PromotedDraft:
    """The draft a send is made of, at the revision whose message it carries."""

    draft_id: uuid.UUID
    revision: int


class DraftMovedOn(Exception):
    """The draft a promotion names is no longer live at the revision it was read at (an
    edit, a deletion or another promotion came first); nothing was written."""


@dataclass(frozen=True, slots=True)
class ClaimedSend:
    """A record a delivery pass holds the lease on, with what it needs to transmit it."""

    seq: int
    outgoing_id: uuid.UUID
    account_id: str
    attempt_count: int
    envelope_from: str
    mime: bytes
    recipients: tuple[Recipient, ...]


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """How an attempt ended. `stage` QUEUED means try again at `retry_at`. `counted` False:
    nothing was offered to anybody (the account waits for consent), so the attempt claiming
    counted is given back."""

    stage: Stage
    recipients: tuple[Recipient, ...]
    failure_code: int | None = None
    retry_at: datetime | None = None
    counted: bool = True


@dataclass(frozen=True, slots=True)
class OutboxListing:
    """An operator's view of one record (`mfctl outbox`): no content, no subject."""

    record: OutgoingRecord
    idempotency_key: str
    not_before: datetime
    lease_expires_at: datetime | None
    transmission_started: bool


class OutboxStore(Protocol):
    def record(
        self,
        new: NewOutgoing,
        ceilings: Sequence[CeilingLimit],
        promoting: PromotedDraft | None = None,
    ) -> tuple[OutgoingRecord, bool]:
        """Write `new` unless the account already holds a record under its idempotency key;
        answer the record that stands and whether this call wrote it. The key is unique per
        account by a constraint, so two racing calls leave one record and both answer it.
        Before writing, each ceiling is counted in the same transaction; one with no room
        raises `CeilingReached` and nothing is written. A repeated call is answered
        without counting: it sends nothing more. A record with `send_after` is written with
        `not_before` no earlier than that instant.

        With `promoting`, the send is that draft's: the draft is marked sent as the record in
        the same transaction, so no send of a draft exists that the draft does not name and
        no delivery pass can take one the call is still deciding about. A draft no longer
        live at that revision raises `DraftMovedOn`, and nothing is written."""
        ...

    def find(self, outgoing_id: uuid.UUID) -> OutgoingRecord | None: ...

    def find_key(self, account_id: str, idempotency_key: str) -> OutgoingRecord | None:
        """The send the account holds under an idempotency key, whatever its stage."""
        ...

    def cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        """Withdraw the send in one conditional statement: only while it is queued and no
        unexpired lease is held on it. Answers the record as it stands afterwards (None when
        nothing is held under the identifier); the caller reads from its stage whether the
        withdrawal happened."""
        ...

    def claim(
        self, worker: str, now: datetime, lease_seconds: float, limit: int
    ) -> list[ClaimedSend]:
        """Take up to `limit` due sends (queued, not before now, not before their
        `send_after`) under a lease, moving them to sending and counting the attempt, in one
        conditional statement per record: a record another worker or a cancellation took
        first is skipped."""
        ...

    def next_due(self) -> datetime | None:
        """The earliest instant at which a queued send becomes due (possibly already past),
        or None when nothing is queued: what an idle delivery pass waits for."""
        ...

    def begin_transmission(self, seq: int, worker: str, now: datetime) -> bool:
        """Note that the message is about to be handed to a server, while the lease is still
        this worker's. From here a lost connection leaves the outcome unknown, and such a
        send is never offered again. False when the lease was lost: transmit nothing."""
        ...

    def finish(self, seq: int, worker: str, result: AttemptResult, now: datetime) -> bool:
        """Write an attempt's outcome and release the lease, if the lease is still this
        worker's."""
        ...

    def recover(self, now: datetime, retry_at: datetime, max_attempts: int) -> int:
        """Sends whose lease expired while sending (or whose claiming process is provably
        gone): failed with an unknown outcome when a transmission had begun; otherwise nothing
        left this deployment, and they are queued again for `retry_at`, or failed once
        `max_attempts` attempts have been counted."""
        ...

    def listing(
        self, limit: int | None, stages: Sequence[Stage] | None = None
    ) -> list[OutboxListing]:
        """The newest records first, for an operator; every one with `limit` None."""
        ...

    def operator_cancel(self, outgoing_id: uuid.UUID, now: datetime) -> OutgoingRecord | None:
        """`cancel` without regard to who queued the send."""
        ...


class MessageComposer(Protocol):
    def compose(self, message: AuthoredMessage) -> ComposedMessage:
        """The message as transmitted: RFC 5322 with CRLF line ends, 7-bit throughout, no
        Bcc field, a Message-ID of its own. With files, multipart/mixed: each file a part of
        its media type with its file name (RFC 2231 when not ASCII); it keeps its Content-Type
        parameters, and its transfer encoding when that is 7-bit safe (a file attached by
        reference asks for base64). Never raises for a message the use case validated."""
        ...


@dataclass(frozen=True, slots=True)
class AuthoredMessage:
    """A message as the use case settled it; every field already checked."""

    from_address: str
    from_name: str | None
    to: tuple[str, ...]
    cc: tuple[str, ...]
    subject: str
    plain_text: str
    html: str | None
    in_reply_to: str | None = None
    references: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    sent_at: datetime | None = None
    # A Message-ID the message keeps (a draft keeps its own across revisions); None has the
    # composer make a new one.
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class ComposedMessage:
    message_id: str
    mime: bytes


@dataclass(frozen=True, slots=True)
class RecipientReply:
    address: str
    code: int | None
    accepted: bool
    temporary: bool = False


@dataclass(frozen=True, slots=True)
class SubmissionOutcome:
    """What a submission server said.

    `connected` False: nothing was said at all (no connection, or it failed before any
    recipient was offered); `temporary` says whether trying later may help. `handed_over`
    True with `data_code` None: the message was sent and no answer came, so the outcome is
    unknown. `secret_unreadable`: the secret the session logs in with could not be read, so
    no connection was made. `consent_required`: the account logs in with OAuth and the
    provider refused its grant; nothing is tried until a person grants access again."""

    connected: bool
    recipients: tuple[RecipientReply, ...] = ()
    handed_over: bool = False
    data_code: int | None = None
    temporary: bool = False
    authentication_refused: bool = False
    secret_unreadable: bool = False
    consent_required: bool = False


class SubmissionTransport(Protocol):
    def submit(
        self,
        envelope_from: str,
        recipients: Sequence[str],
        mime: bytes,
        before_data: Callable[[], bool],
    ) -> SubmissionOutcome:
        """Offer the message over one SMTP session. `before_data` is called after the server
        accepted recipients and before the message is sent; when it answers False the
        session ends without sending it. Every failure is answered as an outcome; the
        secret is read before connecting, and one that cannot be read is
        `secret_unreadable`."""
        ...


class PeerMailboxes(Protocol):
    def owner_of(self, address: str) -> str | None:
        """The account of this deployment that receives mail for `address` without a mail
        server (a local account naming it among its addresses), or None."""
        ...

    def deliver(self, account_id: str, mime: bytes, key: str, *, sender: str) -> None:
        """Put the message the account `sender` submitted into that account's inbox, saying
        which account submitted it. Idempotent per `key`: a delivery repeated after a crash
        leaves one message. Raises OSError when it cannot."""
        ...


class SentFolders(Protocol):
    def file(self, account_id: str, mime: bytes, key: str) -> bool:
        """Keep the sender's copy of a sent message in the folder the account maps to the
        sent role (a local folder, or the account's IMAP server with APPEND); False when the
        account maps none. Raises OSError or a SyncError when the copy could not be kept."""
        ...


class DraftCopyRemoval(Protocol):
    def remove_for_send(self, outgoing_id: uuid.UUID) -> None:
        """Take the drafts-folder copy of the draft promoted to this send out of the owner's
        folder, now that the message has been delivered; nothing for a send no draft became.
        Never raises: a copy that cannot be taken out now is taken out by a later pass."""
        ...
