"""Turning stored rows into the summaries every reading use case publishes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mailfathom.app.reading.views import (
    AttachmentSummary,
    ContentAvailability,
    EmailSummary,
    FlagsView,
    FolderFreshness,
    MachineAuthorship,
    SenderVerification,
)
from mailfathom.app.shared.stored_mail import FolderView, StoredFlags, SummaryRow
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.sender_trust import SenderTrustPolicy

_AVAILABILITY = {
    ContentState.STORED: ContentAvailability.AVAILABLE,
    ContentState.EXCEEDED_SIZE_LIMIT: ContentAvailability.EXCEEDED_SIZE_LIMIT,
    ContentState.AWAITING_HEADROOM: ContentAvailability.AWAITING_STORAGE_HEADROOM,
}


def flags_view(flags: StoredFlags) -> FlagsView:
    """Flags as last observed. A row nobody has looked at yet reports every flag unset and
    says so through `observed_at` being absent."""
    return FlagsView(
        seen=flags.seen,
        flagged=flags.flagged,
        answered=flags.answered,
        draft=flags.draft,
        deleted=flags.deleted,
        keywords=tuple(sorted({k.lower() for k in flags.keywords})),
        observed_at=flags.observed_at,
    )


def availability(state: ContentState) -> ContentAvailability:
    return _AVAILABILITY[state]


def verification_of(row: SummaryRow, trust: SenderTrustPolicy) -> SenderVerification:
    """The stored verdict's conclusion, and whether the configuration as it stands now
    trusts the author it was reached about."""
    return SenderVerification(
        author_authentication=row.verdict.author_authentication,
        deployment_trust=trust.trust_of(row.verdict, row.sender_address),
    )


def authorship_of(row: SummaryRow) -> MachineAuthorship:
    return MachineAuthorship(state=row.authorship.state, likelihood=row.authorship.likelihood)


def summarize(
    row: SummaryRow, display_names: Mapping[str, str], trust: SenderTrustPolicy
) -> EmailSummary:
    return EmailSummary(
        stored_email_id=row.stored_email_id,
        account_id=row.account_id,
        account_display_name=display_names.get(row.account_id, row.account_id),
        folder_alias=row.folder_alias,
        message_id=row.message_id,
        thread_id=row.thread_id,
        subject=row.subject,
        sender_address=row.sender_address,
        sender_display_name=row.sender_name,
        sender_verification=verification_of(row, trust),
        machine_authorship=authorship_of(row),
        to_addresses=row.to_addresses,
        sent_at=row.sent_at,
        received_at=row.received_at,
        size_octets=row.size_octets,
        attachments=AttachmentSummary(
            attachment_count=row.attachment_count,
            inline_resource_count=row.inline_count,
            total_size_octets=row.attachment_octets,
            is_encrypted=row.is_encrypted,
            has_unverified_signature=row.has_unverified_signature,
            has_unexpanded_tnef=row.has_unexpanded_tnef,
        ),
        flags=flags_view(row.flags),
        content_availability=availability(row.content_state),
        also_in_folders=row.other_folder_aliases,
    )


def freshness(folders: Iterable[FolderView]) -> tuple[FolderFreshness, ...]:
    return tuple(FolderFreshness(f.account_id, f.alias, f.last_committed_at) for f in folders)
