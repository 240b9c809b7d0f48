"""reply_to_email and forward_email: a send that begins from a message this deployment holds.

Everything a caller does not write is read from the stored copy: who a reply reaches, the
subject, the threading fields, the quotation, and for a forward the original's files (from the
content store, never from the mail server, bounded before a byte is read). An email that
cannot be answered for any reason (nothing held, an account no longer served, a withheld
folder, unreadable content) is one answer, 53005, so identifiers cannot be probed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import structlog

from mailfathom.app import response_derivation as derive
from mailfathom.app import sending_policy, sending_rules
from mailfathom.app.email_identifiers import parse_identifier
from mailfathom.app.mailbox_selection import ServedAccount
from mailfathom.app.ports import ContentRepairStore, ContentStore
from mailfathom.app.projection import require
from mailfathom.app.reading_ports import MailboxReadStore
from mailfathom.app.reading_types import EmailRow
from mailfathom.app.send_email import Submission
from mailfathom.app.sending_ports import Attachment, AttachmentReader, AuthoredMessage
from mailfathom.app.sync_types import ContentState
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import ContentMissingError, Refusal
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord, Recipient

log = structlog.get_logger("mailfathom.sending")

_NOT_ANSWERABLE = "No email this deployment can answer is held under that identifier."


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    stored_email_id: object
    everyone: bool
    plain_text_body: object
    idempotency_key: object
    cc: Iterable[object] | None = None
    html_body: object = None


@dataclass(frozen=True, slots=True)
class ForwardRequest:
    stored_email_id: object
    to: Iterable[object] | None
    plain_text_body: object
    idempotency_key: object
    cc: Iterable[object] | None = None
    bcc: Iterable[object] | None = None
    html_body: object = None


@dataclass(frozen=True, slots=True)
class _Original:
    row: EmailRow
    raw: bytes | None


class AuthoredResponseSubmission:
    def __init__(
        self,
        submission: Submission,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        content: ContentStore,
        repairs: ContentRepairStore,
        attachments: AttachmentReader,
    ) -> None:
        self._submission = submission
        self._store = store
        self._served = tuple(a.account_id for a in served)
        self._content = content
        self._repairs = repairs
        self._attachments = attachments

    # -- the answered email --------------------------------------------------------------

    def _original(self, stored_email_id: uuid.UUID) -> _Original:
        with self._store.snapshot() as view:
            folders = [f.folder_id for f in view.readable_folders(self._served)]
            rows = view.emails([stored_email_id], folders, with_html=False) if folders else {}
        row = rows.get(stored_email_id)
        if row is None:
            raise Refusal(Code.EMAIL_NOT_ANSWERABLE, _NOT_ANSWERABLE)
        raw = None
        if row.summary.content_state is ContentState.STORED and row.content_key is not None:
            try:
                if row.text_missing:
                    raise ContentMissingError("The stored text of this email is missing.")
                raw = self._content.get(row.content_key)
            except ContentMissingError:
                self._repairs.request_repair(row.summary.seq, "content-unreadable")
                log.warning("content.repair_requested")
                raise Refusal(Code.EMAIL_NOT_ANSWERABLE, _NOT_ANSWERABLE) from None
        return _Original(row, raw)

    def _begin(self, caller: Caller, stored_email_id: object, key: object) -> tuple[str, _Original]:
        require(caller, Permission.SEND)
        require(caller, Permission.MAIL_READ)
        identifier = parse_identifier(
            stored_email_id, Code.NOT_AN_EMAIL_IDENTIFIER, "storedEmailId"
        )
        checked_key = sending_rules.idempotency_key(key)
        return checked_key, self._original(identifier)

    # -- reply ---------------------------------------------------------------------------

    def reply(self, caller: Caller, request: ReplyRequest) -> OutgoingRecord:
        key, original = self._begin(caller, request.stored_email_id, request.idempotency_key)
        config = self._submission.config
        bounds = config.mail_delivery
        account_id = original.row.summary.account_id
        sender = sending_rules.sending_account(config, account_id)
        to, cc = derive.reply_audience(
            original.row, request.everyone, sender.account.own_addresses()
        )
        derived = [_derived(a) for a in to + cc]
        written = sending_rules.address_list(request.cc, "cc")
        recipients = _merged(
            [Recipient(AddressField.TO, a) for a in derived[: len(to)]]
            + [Recipient(AddressField.CC, a) for a in derived[len(to) :]]
            + [Recipient(AddressField.CC, a) for a in written],
            bounds.max_recipient_count,
        )
        text = sending_rules.bodies(
            request.plain_text_body, request.html_body, bounds.max_body_characters
        )
        sending_policy.admit(bounds.recipient_policy, [r.address for r in recipients])
        sending_policy.vouch(config, written)
        in_reply_to, references = derive.threading_fields(original.row)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=derive.reply_subject(original.row.summary.subject),
            plain_text=derive.reply_text(text.plain, original.row, bounds.max_body_characters),
            html=text.html,
            in_reply_to=in_reply_to,
            references=references,
        )
        return self._submission.write(
            caller, OutgoingKind.REPLY, account_id, key, message, recipients
        )

    # -- forward -------------------------------------------------------------------------

    def forward(self, caller: Caller, request: ForwardRequest) -> OutgoingRecord:
        key, original = self._begin(caller, request.stored_email_id, request.idempotency_key)
        config = self._submission.config
        bounds = config.mail_delivery
        account_id = original.row.summary.account_id
        sender = sending_rules.sending_account(config, account_id)
        recipients = sending_rules.recipients(
            request.to, request.cc, request.bcc, bounds.max_recipient_count
        )
        text = sending_rules.bodies(
            request.plain_text_body, request.html_body, bounds.max_body_characters
        )
        addresses = [r.address for r in recipients]
        sending_policy.admit(bounds.recipient_policy, addresses)
        sending_policy.vouch(config, addresses)
        files = self._files(original)
        message = AuthoredMessage(
            from_address=sender.address,
            from_name=sender.delivery.display_name,
            to=tuple(r.address for r in recipients if r.field is AddressField.TO),
            cc=tuple(r.address for r in recipients if r.field is AddressField.CC),
            subject=derive.forward_subject(original.row.summary.subject),
            plain_text=derive.forward_text(text.plain, original.row, bounds.max_body_characters),
            html=text.html,
            attachments=files,
        )
        return self._submission.write(
            caller, OutgoingKind.FORWARD, account_id, key, message, recipients
        )

    def _files(self, original: _Original) -> tuple[Attachment, ...]:
        """The original's attachments, held to the configured bounds by their stored sizes
        before anything is read."""
        bounds = self._submission.config.mail_delivery
        parts = [p for p in original.row.parts if p.kind == "attachment" and p.part_path]
        if len(parts) > bounds.max_attachment_count:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"The forwarded email carries more than {bounds.max_attachment_count} files, "
                "the most this deployment sends (MailDelivery.MaxAttachmentCount).",
            )
        if any(p.size_octets > bounds.max_attachment_octets for p in parts):
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                f"A file of the forwarded email is larger than {bounds.max_attachment_octets} "
                "octets (MailDelivery.MaxAttachmentSize).",
            )
        if sum(p.size_octets for p in parts) > bounds.max_total_attachment_octets:
            raise Refusal(
                Code.MESSAGE_TOO_LARGE,
                "The files of the forwarded email are larger together than "
                f"{bounds.max_total_attachment_octets} octets "
                "(MailDelivery.MaxTotalAttachmentSize).",
            )
        if not parts or original.raw is None:
            return ()
        found = self._attachments.read(original.raw, [p.part_path or "" for p in parts])
        return tuple(
            Attachment(
                p.file_name, p.media_type, part.content, part.parameters, part.transfer_encoding
            )
            for p, part in zip(parts, found, strict=True)
        )


def _derived(address: str) -> str:
    """A recipient taken from the answered email, which must still be one a message can be
    sent to."""
    try:
        return sending_rules.plain_address(address, "the recipients derived from the email")
    except Refusal:
        raise Refusal(
            Code.MESSAGE_FIELD_NOT_COMPOSABLE,
            "A recipient derived from the answered email is not a plain ASCII address; this "
            "deployment cannot send to it.",
        ) from None


def _merged(recipients: list[Recipient], max_count: int) -> tuple[Recipient, ...]:
    seen: set[str] = set()
    kept: list[Recipient] = []
    for r in recipients:
        if r.address.lower() not in seen:
            seen.add(r.address.lower())
            kept.append(r)
    if not kept:
        raise Refusal(
            Code.MESSAGE_FIELD_NOT_COMPOSABLE, "The answered email names nobody to reply to."
        )
    if len(kept) > max_count:
        raise Refusal(
            Code.MESSAGE_TOO_LARGE,
            f"The reply is addressed to more than {max_count} recipients, the most this "
            "deployment sends one message to.",
        )
    return tuple(kept)
