"""The email a reply or a forward begins from, read from the local copy.

Everything a caller does not write is read from the stored copy: who a reply reaches, the
subject, the threading fields, the quotation, and for a forward the original's files (from the
content store, never from the mail server, bounded before a byte is read). An email that
cannot be answered for any reason (nothing held, an account no longer served, a withheld
folder, unreadable content) is one answer, 53005, so identifiers cannot be probed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.rules import SendingAccount
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.email_identifiers import parse_identifier
from mailfathom.app.shared.files import Attachment, AttachmentReader
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail import EmailRow
from mailfathom.app.shared.stored_mail_ports import (
    ContentRepairStore,
    ContentStore,
    MailboxReadStore,
)
from mailfathom.domain.access import Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.errors import ContentMissingError, Refusal

log = structlog.get_logger("mailfathom.sending")

_NOT_ANSWERABLE = "No email this deployment can answer is held under that identifier."


def not_answerable() -> Refusal:
    """The one answer for every email that cannot be answered (53005)."""
    return Refusal(Code.EMAIL_NOT_ANSWERABLE, _NOT_ANSWERABLE)


@dataclass(frozen=True, slots=True)
class Original:
    row: EmailRow
    raw: bytes | None


@dataclass(frozen=True, slots=True)
class Answer:
    """A response's beginning: its checked key, the answered email, the account answering."""

    key: str
    original: Original
    sender: SendingAccount

    @property
    def account_id(self) -> str:
        return self.original.row.summary.account_id


class AnsweredEmails:
    """Finds the email a response answers, among the folders this deployment serves."""

    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        content: ContentStore,
        repairs: ContentRepairStore,
    ) -> None:
        self._store = store
        self._served = tuple(a.account_id for a in served)
        self._content = content
        self._repairs = repairs

    def begin(
        self,
        caller: Caller,
        permissions: Permissions,
        config: DeploymentConfig,
        stored_email_id: object,
        key: object,
    ) -> Answer:
        """Check, in this order, the caller's grant against the use case's declaration, the
        identifier, the key; then find the email and the account that answers it."""
        require(caller, permissions)
        identifier = parse_identifier(
            stored_email_id, Code.NOT_AN_EMAIL_IDENTIFIER, "storedEmailId"
        )
        checked_key = sending_rules.idempotency_key(key)
        original = self.find(identifier)
        account_id = original.row.summary.account_id
        return Answer(checked_key, original, sending_rules.sending_account(config, account_id))

    def find(self, stored_email_id: uuid.UUID) -> Original:
        with self._store.snapshot() as view:
            folders = [f.folder_id for f in view.readable_folders(self._served)]
            rows = view.emails([stored_email_id], folders, with_html=False) if folders else {}
        row = rows.get(stored_email_id)
        if row is None:
            raise not_answerable()
        raw = None
        if row.summary.content_state is ContentState.STORED and row.content_key is not None:
            try:
                if row.text_missing:
                    raise ContentMissingError("The stored text of this email is missing.")
                raw = self._content.get(row.content_key)
            except ContentMissingError:
                self._repairs.request_repair(
                    row.summary.account_id, row.summary.seq, "content-unreadable"
                )
                log.warning("content.repair_requested")
                raise not_answerable() from None
        return Original(row, raw)


def forwarded_files(
    original: Original, bounds: MailDeliveryConfig, reader: AttachmentReader
) -> tuple[Attachment, ...]:
    """The original's attachments, held to the configured bounds by their stored sizes
    before anything is read."""
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
    found = reader.read(original.raw, [p.part_path or "" for p in parts])
    return tuple(
        Attachment(p.file_name, p.media_type, part.content, part.parameters, part.transfer_encoding)
        for p, part in zip(parts, found, strict=True)
    )
