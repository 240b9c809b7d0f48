"""get_email_content: up to ten emails, or one conversation, read from the local copy.

The answer is per email: one email that cannot be served (not held, or its stored content
unreadable) costs the caller that entry, not the call. Reading never reaches a mail server;
content found missing or damaged is answered with 55001 and a repair request.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import structlog

from mailfathom.app.reading import screening
from mailfathom.app.reading.attachment_links import LinkIssuing
from mailfathom.app.reading.ports import HtmlSanitizer
from mailfathom.app.reading.projection import authorship_of, flags_view, verification_of
from mailfathom.app.reading.rendering import (
    CharacterBudget,
    attachment_views,
    authorship_evidence,
    counts_of,
    empty_text,
    headers_view,
    thread_block,
)
from mailfathom.app.reading.saving import PartSaving, save_request, save_requested
from mailfathom.app.reading.views import (
    BodyAvailability,
    BodyView,
    ContentRead,
    EmailContent,
    EmailEntry,
    EntryFailure,
    TextRepresentation,
)
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.content_screen import UNSCREENED, ContentScreen
from mailfathom.app.shared.email_identifiers import (
    MAX_EMAILS_PER_READ,
    parse_email_list,
    parse_identifier,
)
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_mail import EmailRow, ThreadMember
from mailfathom.app.shared.stored_mail_ports import (
    ContentRepairStore,
    ContentStore,
    MailboxReadStore,
    MailboxReadView,
)
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.errors import ContentMissingError, Refusal
from mailfathom.domain.sender_trust import NO_TRUSTED_SENDERS, SenderTrustPolicy

log = structlog.get_logger("mailfathom.read")

_NOT_HELD = EntryFailure(Code.EMAIL_NOT_HELD, "No stored email answers to this identifier.")
_UNREADABLE = EntryFailure(
    Code.CONTENT_UNAVAILABLE,
    "The stored content of this email is being repaired; ask again after the next synchronization.",
)

PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ})
_NOT_STORED = {
    ContentState.EXCEEDED_SIZE_LIMIT: BodyAvailability.NOT_STORED_EXCEEDED_SIZE_LIMIT,
    ContentState.AWAITING_HEADROOM: BodyAvailability.NOT_STORED_AWAITING_STORAGE_HEADROOM,
}


@dataclass(frozen=True, slots=True)
class ContentRequest:
    stored_email_ids: Iterable[object] | None = None
    thread_id: object | None = None
    include_sanitized_html: bool = False
    include_attachment_download_links: bool = False
    # One attachment of the one email named, saved to a new file (see `saving`).
    save_part: object = None
    save_to: object = None


class EmailContentReader:
    def __init__(
        self,
        store: MailboxReadStore,
        served: Sequence[ServedAccount],
        content: ContentStore,
        repairs: ContentRepairStore,
        sanitizer: HtmlSanitizer,
        saving: PartSaving,
        links: LinkIssuing | None = None,
        *,
        remote_images: frozenset[str] = frozenset(),
        sender_trust: SenderTrustPolicy = NO_TRUSTED_SENDERS,
        screen: ContentScreen = UNSCREENED,
    ) -> None:
        """`remote_images`: the accounts whose sanitized HTML may load remote images."""
        self._remote_images = remote_images
        self._saving = saving
        self._links = links
        self._trust = sender_trust
        self._screen = screen
        self._store = store
        self._served = tuple(a.account_id for a in served)
        self._content = content
        self._repairs = repairs
        self._sanitizer = sanitizer

    def read(self, caller: Caller, request: ContentRequest) -> ContentRead:
        require(caller, PERMISSIONS)
        saving = save_requested(request.save_part, request.save_to)
        if (request.stored_email_ids is None) == (request.thread_id is None):
            raise Refusal(
                Code.SELECTION_AMBIGUOUS,
                "Name either storedEmailIds or threadId, exactly one of the two.",
            )
        wanted = None
        if request.stored_email_ids is not None:
            wanted = parse_email_list(request.stored_email_ids)
        saved = None
        if saving:
            save = save_request(request.save_part, request.save_to, wanted)
            saved = self._saving.save(caller, save)
        with self._store.snapshot() as view:
            return dataclasses.replace(self._read(view, request, wanted), saved=saved)

    def _read(
        self, view: MailboxReadView, request: ContentRequest, named: list[uuid.UUID] | None
    ) -> ContentRead:
        folder_ids = [f.folder_id for f in view.readable_folders(self._served)]
        unread: tuple[uuid.UUID, ...] = ()
        if named is not None:
            wanted = named
        else:
            thread_id = parse_identifier(
                request.thread_id, Code.NOT_A_THREAD_IDENTIFIER, "thread id"
            )
            conversation = view.thread(thread_id, folder_ids) if folder_ids else []
            wanted = [m.stored_email_id for m in conversation[:MAX_EMAILS_PER_READ]]
            unread = tuple(m.stored_email_id for m in conversation[MAX_EMAILS_PER_READ:])
        rows = (
            view.emails(wanted, folder_ids, with_html=request.include_sanitized_html)
            if wanted and folder_ids
            else {}
        )
        intact = {i: row for i, row in rows.items() if self._content_intact(row)}
        conversations = {r.summary.thread_id for r in intact.values()}
        threads = view.threads(sorted(c for c in conversations if c is not None), folder_ids)
        budget = CharacterBudget()
        entries: list[EmailEntry] = []
        for identifier in wanted:
            row = intact.get(identifier)
            if row is None:
                failure = _UNREADABLE if identifier in rows else _NOT_HELD
                entries.append(EmailEntry(identifier, None, failure))
                continue
            thread_of = row.summary.thread_id
            members = threads.get(thread_of, []) if thread_of is not None else None
            content = self._content_of(row, members, budget, request)
            entries.append(EmailEntry(identifier, content, None))
        return ContentRead(tuple(entries), unread)

    def _content_intact(self, row: EmailRow) -> bool:
        if row.summary.content_state is not ContentState.STORED or row.content_key is None:
            return True
        try:
            if row.text_missing:
                raise ContentMissingError("The stored text of this email is missing.")
            self._content.get(row.content_key)
        except ContentMissingError:
            self._repairs.request_repair(
                row.summary.account_id, row.summary.seq, "content-unreadable"
            )
            log.warning("content.repair_requested")
            return False
        return True

    def _content_of(
        self,
        row: EmailRow,
        members: list[ThreadMember] | None,
        budget: CharacterBudget,
        request: ContentRequest,
    ) -> EmailContent:
        summary = row.summary
        state = summary.content_state
        if state in _NOT_STORED:
            body = BodyView(_NOT_STORED[state], empty_text(), None)
        elif summary.is_encrypted:
            body = BodyView(BodyAvailability.ENCRYPTED_NOT_READABLE_LOCALLY, empty_text(), None)
        else:
            plain = self._bounded(row.plain_text or "", budget)
            html = None
            if request.include_sanitized_html and row.html is not None:
                remote = summary.account_id in self._remote_images
                html = self._bounded(
                    self._sanitizer.sanitize(row.html, remote_images=remote), budget
                )
            body = BodyView(BodyAvailability.READABLE, plain, html)
        return EmailContent(
            account_id=summary.account_id,
            folder_alias=summary.folder_alias,
            size_octets=summary.size_octets,
            sender_verification=verification_of(summary, self._trust),
            machine_authorship=authorship_of(summary),
            authorship_evidence=authorship_evidence(summary),
            headers=screening.headers(self._screen, headers_view(row)),
            body=body,
            attachments=screening.attachments(
                self._screen,
                attachment_views(row, request.include_attachment_download_links, self._links),
            ),
            attachment_counts=counts_of(row),
            flags=flags_view(summary.flags),
            thread=screening.thread(self._screen, thread_block(summary, members)),
        )

    def _bounded(self, text: str, budget: CharacterBudget) -> TextRepresentation:
        """A body screened, then cut to the call's bounds."""
        if not self._screen.active:
            return budget.take(text)
        screened = self._screen.body(text)
        return budget.take(screened.text, original=len(text), withheld=screened.withheld)
