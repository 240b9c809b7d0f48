"""A file of a stored email, read from the content store under the rule a content read
applies: only an email of a served account in a folder tools may read, and only a part the
read describes as an attachment.

An email the caller may not read, or that is not held, is 53002 (the answer get_email_content
gives); a part the email does not carry as an attachment is 53011, the answer for any file
this deployment does not serve. Nothing here reaches a mail server.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from mailfathom.app.shared.authorization import Permissions, permits
from mailfathom.app.shared.file_rules import not_served
from mailfathom.app.shared.files import AttachmentReader, StoredPart
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail import PartRow, SummaryRow
from mailfathom.app.shared.stored_mail_ports import (
    ContentRepairStore,
    ContentStore,
    MailboxReadStore,
)
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.errors import ContentMissingError, Refusal

log = structlog.get_logger("mailfathom.files")

# What reading a stored email's file takes: the grant a content read takes.
READ_PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})


@dataclass(frozen=True, slots=True)
class PartOfEmail:
    """A part as the store describes it (`row`) and the part itself, its octets decoded."""

    row: PartRow
    part: StoredPart


class StoredParts:
    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        content: ContentStore,
        repairs: ContentRepairStore,
        reader: AttachmentReader,
    ) -> None:
        self._store = store
        self._served = tuple(a.account_id for a in served)
        self._content = content
        self._repairs = repairs
        self._reader = reader

    def describe(self, caller: Caller, stored_email_id: uuid.UUID, part_id: str) -> PartRow:
        """The stored description of the part (its name, type and decoded size), read
        without touching its octets, so a bound can be checked before a byte is read."""
        return self._locate(caller, stored_email_id, part_id)[0]

    def read(
        self,
        caller: Caller,
        stored_email_id: uuid.UUID,
        part_id: str,
        *,
        account_id: str | None = None,
    ) -> PartOfEmail:
        """The part and its decoded octets. With `account_id`, an email of any other account
        is answered as one not held (a download link names the account it was issued for)."""
        row, content_key, summary = self._locate(caller, stored_email_id, part_id, account_id)
        try:
            raw = self._content.get(content_key)
        except ContentMissingError:
            self._repairs.request_repair(summary.account_id, summary.seq, "content-unreadable")
            log.warning("content.repair_requested")
            raise
        try:
            (part,) = self._reader.read(raw, [part_id])
        except ValueError:
            raise not_served() from None
        return PartOfEmail(row, part)

    def _locate(
        self,
        caller: Caller,
        stored_email_id: uuid.UUID,
        part_id: str,
        account_id: str | None = None,
    ) -> tuple[PartRow, str, SummaryRow]:
        not_held = Refusal(Code.EMAIL_NOT_HELD, "No stored email answers to this identifier.")
        if not permits(caller, READ_PERMISSIONS):
            raise not_held
        with self._store.snapshot() as view:
            folders = [f.folder_id for f in view.readable_folders(self._served)]
            rows = view.emails([stored_email_id], folders, with_html=False) if folders else {}
        email = rows.get(stored_email_id)
        if email is None or account_id not in (None, email.summary.account_id):
            raise not_held
        summary = email.summary
        if summary.content_state is not ContentState.STORED or email.content_key is None:
            raise not_served()
        part = next(
            (p for p in email.parts if p.kind == "attachment" and p.part_path == part_id), None
        )
        if part is None:
            raise not_served()
        return part, email.content_key, summary
