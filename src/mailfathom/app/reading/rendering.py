"""Pieces of a content read: bounded text, headers, attachments, the conversation block."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence

from mailfathom.app.reading.attachment_links import LinkIssuing
from mailfathom.app.reading.views import (
    AttachmentCounts,
    AttachmentView,
    AuthorshipEvidence,
    DownloadState,
    HeadersView,
    ParticipantView,
    SenderAuthentication,
    TextRepresentation,
    ThreadBlock,
    ThreadMessageRef,
    TruncatedBy,
)
from mailfathom.app.shared.stored_mail import EmailRow, SummaryRow, ThreadMember
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.sender_trust import address_domain
from mailfathom.domain.sender_verdict import VerdictState

BODY_CHARACTER_LIMIT = 50_000
READ_CHARACTER_BUDGET = 150_000
OTHER_MESSAGES_LIMIT = 50


class CharacterBudget:
    """The characters one call may still return, shared by every body it serves.

    Each representation is cut at the per-email limit first and then at what remains of
    the call's budget, and says which of the two cut it."""

    def __init__(self, total: int = READ_CHARACTER_BUDGET) -> None:
        self.remaining = total

    def take(
        self, text: str, *, original: int | None = None, withheld: bool = False
    ) -> TextRepresentation:
        """`text` within the bounds. When a screen changed the body, `original` is the
        body's own length and `withheld` says the scan ceiling cut it; a bound here that
        cuts further is the one named."""
        cut_by = TruncatedBy.SENSITIVE_CONTENT_SCAN_CEILING if withheld else TruncatedBy.NONE
        if original is None:
            original = len(text)
        if len(text) > BODY_CHARACTER_LIMIT:
            text, cut_by = text[:BODY_CHARACTER_LIMIT], TruncatedBy.BODY_CHARACTER_LIMIT
        if len(text) > self.remaining:
            text, cut_by = text[: self.remaining], TruncatedBy.READ_CHARACTER_BUDGET
        self.remaining -= len(text)
        return TextRepresentation(text, original, cut_by)


def empty_text() -> TextRepresentation:
    return TextRepresentation("", 0, TruncatedBy.NONE)


def sender_authentication(summary: SummaryRow) -> SenderAuthentication:
    """The stored evidence. Mail never verified names the From domain it displays and
    nothing else."""
    verdict = summary.verdict
    if verdict.state is VerdictState.NOT_YET_VERIFIED:
        return SenderAuthentication(
            authenticated_domain=None,
            displayed_author_domain=address_domain(summary.sender_address),
        )
    return SenderAuthentication(
        authenticated_domain=verdict.authenticated_domain,
        displayed_author_domain=verdict.displayed_author_domain,
        authenticated_by=verdict.authenticated_by.value,
        dmarc=verdict.dmarc.value,
        verdict_source=verdict.verdict_source.value,
        verification_state=verdict.state.value,
    )


def authorship_evidence(summary: SummaryRow) -> AuthorshipEvidence:
    reading = summary.authorship
    return AuthorshipEvidence(
        signals=tuple(s.value for s in reading.signals),
        profile_revision=reading.profile_revision,
    )


def headers_view(row: EmailRow) -> HeadersView:
    summary = row.summary
    return HeadersView(
        subject=summary.subject,
        sent_at=summary.sent_at,
        received_at=summary.received_at,
        participants=tuple(
            ParticipantView(p.role, p.address, p.display_name) for p in row.participants
        ),
        message_id=summary.message_id,
        in_reply_to=row.in_reply_to,
        references=row.references,
        sender_authentication=sender_authentication(summary),
    )


def attachment_views(
    row: EmailRow, links_requested: bool, issuing: LinkIssuing | None
) -> tuple[AttachmentView, ...]:
    """Every attachment described, each with a link of its own when the call asked for links
    and the deployment issues them (`issuing`); `unavailable` when it does not."""
    views = []
    for p in row.parts:
        if p.kind != "attachment":
            continue
        view = AttachmentView(
            p.file_name,
            p.name_was_normalized,
            p.media_type,
            p.size_octets,
            DownloadState.UNAVAILABLE if links_requested else DownloadState.NOT_REQUESTED,
            p.part_path,
        )
        if links_requested and issuing is not None and p.part_path is not None:
            link = issuing.issue(row.summary.account_id, row.summary.stored_email_id, p.part_path)
            view = dataclasses.replace(
                view,
                download_state=DownloadState.ISSUED,
                download_url=link.url,
                download_expires_at=link.expires_at,
            )
        views.append(view)
    return tuple(views)


def counts_of(row: EmailRow) -> AttachmentCounts | None:
    """None when nothing has read the message's parts (its MIME was never stored)."""
    summary = row.summary
    if summary.content_state is not ContentState.STORED or summary.attachment_count is None:
        return None
    return AttachmentCounts(summary.attachment_count, summary.inline_count or 0)


def thread_block(summary: SummaryRow, members: Sequence[ThreadMember] | None) -> ThreadBlock | None:
    """The conversation as far as the caller may see it; a parent outside that view makes
    its reply a root rather than a pointer to something withheld. The email read may be a
    copy another member stands for (the same message in a later folder): it takes that
    member's place."""
    if summary.thread_id is None or not members:
        return None
    by_seq = {m.seq: m for m in members}
    by_copy = {copy: m for m in members for copy in m.copies}
    this = by_seq.get(summary.seq) or by_copy.get(summary.seq)
    if this is None:
        return None

    def parent_of(member: ThreadMember) -> uuid.UUID | None:
        parent = by_seq.get(member.parent_seq) if member.parent_seq is not None else None
        return parent.stored_email_id if parent is not None else None

    order = {m.seq: index for index, m in enumerate(members)}
    others = [m for m in members if m.seq != this.seq]
    named = others[:OTHER_MESSAGES_LIMIT]
    return ThreadBlock(
        thread_id=summary.thread_id,
        position=order[this.seq],
        in_reply_to_stored_email_id=parent_of(this),
        message_count=len(members),
        other_messages=tuple(
            ThreadMessageRef(
                stored_email_id=m.stored_email_id,
                position=order[m.seq],
                in_reply_to_stored_email_id=parent_of(m),
                subject=m.subject,
                sent_at=m.sent_at,
                sender_address=m.sender_address,
            )
            for m in named
        ),
        more_messages_not_named=len(others) > len(named),
    )
