"""Mapping the use cases' answers onto the published shapes, field for field."""

from __future__ import annotations

import uuid

from mailfathom.app.answering.ask_mail import QuestionAnswer
from mailfathom.app.reading import views as v
from mailfathom.app.reading.list_accounts import AccountDirectory
from mailfathom.domain.authorship import AuthorshipState
from mailfathom.entrypoints.mcp import content_models as c
from mailfathom.entrypoints.mcp import models as m
from mailfathom.entrypoints.mcp.answer_models import AskMailResult, CitationModel


def _id(value: uuid.UUID | None) -> str | None:
    return str(value) if value is not None else None


def freshness(items: tuple[v.FolderFreshness, ...]) -> list[m.FolderFreshnessModel]:
    return [
        m.FolderFreshnessModel(
            accountId=f.account_id,
            alias=f.alias,
            lastCommittedAt=f.last_committed_at,
            wasSynchronized=f.was_synchronized,
        )
        for f in items
    ]


def accounts(directory: AccountDirectory) -> m.ListAccountsResult:
    return m.ListAccountsResult(
        accounts=[
            m.AccountModel(
                accountId=a.account_id,
                displayName=a.display_name,
                synchronizationMode="push" if a.synchronization_mode == "push" else "polling",
                folders=[
                    m.FolderEntryModel(
                        alias=f.alias,
                        lastCommittedAt=f.last_committed_at,
                        wasSynchronized=f.was_synchronized,
                    )
                    for f in a.folders
                ],
            )
            for a in directory.accounts
        ],
        synchronizationEnabled=directory.synchronization_enabled,
    )


def _verification(value: v.SenderVerification) -> m.SenderVerificationModel:
    return m.SenderVerificationModel(
        authorAuthentication=value.author_authentication.value,
        deploymentTrust=value.deployment_trust.value,
    )


def _authorship(value: v.MachineAuthorship) -> m.MachineAuthorshipModel:
    """0 beside notAssessed, as the contract has it: a zero that means nothing, which the
    text a model reads leaves out as the schema's default."""
    assessed = value.state is not AuthorshipState.NOT_ASSESSED
    return m.MachineAuthorshipModel(
        state=value.state.value,
        likelihood=min(1.0, max(0.0, value.likelihood)) if assessed else 0.0,
    )


def _flags(value: v.FlagsView) -> m.RemoteFlagsModel:
    return m.RemoteFlagsModel(
        seen=value.seen,
        flagged=value.flagged,
        answered=value.answered,
        draft=value.draft,
        deleted=value.deleted,
        keywords=list(value.keywords),
        observedAt=value.observed_at,
        wasObserved=value.was_observed,
    )


def summary(s: v.EmailSummary) -> m.EmailSummaryModel:
    a = s.attachments
    return m.EmailSummaryModel(
        storedEmailId=str(s.stored_email_id),
        accountId=s.account_id,
        accountDisplayName=s.account_display_name,
        folderAlias=s.folder_alias,
        messageId=s.message_id,
        threadId=_id(s.thread_id),
        subject=s.subject,
        senderAddress=s.sender_address,
        senderDisplayName=s.sender_display_name,
        senderVerification=_verification(s.sender_verification),
        machineAuthorship=_authorship(s.machine_authorship),
        toAddresses=list(s.to_addresses),
        sentAt=s.sent_at,
        receivedAt=s.received_at,
        sizeBytes=s.size_octets,
        attachments=m.AttachmentSummaryModel(
            attachmentCount=a.attachment_count,
            inlineResourceCount=a.inline_resource_count,
            totalSizeBytes=a.total_size_octets,
            isEncrypted=a.is_encrypted,
            hasUnverifiedSignature=a.has_unverified_signature,
            hasUnexpandedTnef=a.has_unexpanded_tnef,
        ),
        remoteFlags=_flags(s.flags),
        contentAvailability=s.content_availability.value,
        alsoInFolders=list(s.also_in_folders),
    )


def timeline(page: v.TimelinePage) -> m.ListEmailsResult:
    return m.ListEmailsResult(
        emails=[summary(e) for e in page.emails],
        nextCursor=page.next_cursor,
        includedJunkMail=page.included_junk_mail,
        folderFreshness=freshness(page.folder_freshness),
        containsScan=None
        if page.contains_scan is None
        else m.ContainsScanModel(
            bodiesExamined=page.contains_scan.bodies_examined, cut=page.contains_scan.cut
        ),
    )


def search(result: v.SearchResult, snippet_ceiling: int) -> m.SearchEmailsResult:
    """`snippet_ceiling` is applied again here: this is the last place mail content passes
    before it reaches a caller, so a defective layer below cannot widen an extract."""
    return m.SearchEmailsResult(
        matches=[
            m.SearchMatchModel(
                summary=summary(match.summary),
                relevanceRank=match.relevance_rank,
                snippets=[s[:snippet_ceiling] for s in match.snippets],
            )
            for match in result.matches
        ],
        retrievalMode=result.retrieval_mode.value,
        semanticSearch=result.semantic_search.value,
        includedJunkMail=result.included_junk_mail,
        folderFreshness=freshness(result.folder_freshness),
        patternScan=None
        if result.pattern_scan is None
        else m.PatternScanModel(
            candidatesScanned=result.pattern_scan.candidates_scanned,
            cut=result.pattern_scan.cut,
        ),
    )


def _text(value: v.TextRepresentation) -> c.TextModel:
    return c.TextModel(
        text=value.text,
        originalCharacterCount=value.original_character_count,
        truncatedBy=value.truncated_by.value,
    )


def _thread(block: v.ThreadBlock | None) -> c.ThreadModel | None:
    if block is None:
        return None
    return c.ThreadModel(
        threadId=str(block.thread_id),
        position=block.position,
        inReplyToStoredEmailId=_id(block.in_reply_to_stored_email_id),
        messageCount=block.message_count,
        otherMessages=[
            c.ThreadMessageModel(
                storedEmailId=str(o.stored_email_id),
                position=o.position,
                inReplyToStoredEmailId=_id(o.in_reply_to_stored_email_id),
                subject=o.subject,
                sentAt=o.sent_at,
                senderAddress=o.sender_address,
            )
            for o in block.other_messages
        ],
        moreMessagesNotNamed=block.more_messages_not_named,
    )


def _content(e: v.EmailContent) -> c.EmailContentModel:
    h = e.headers
    auth = h.sender_authentication
    return c.EmailContentModel(
        accountId=e.account_id,
        folderAlias=e.folder_alias,
        sizeBytes=e.size_octets,
        senderVerification=_verification(e.sender_verification),
        machineAuthorship=_authorship(e.machine_authorship),
        authorshipEvidence=c.AuthorshipEvidenceModel(
            signals=list(e.authorship_evidence.signals),  # type: ignore[arg-type]
            profileRevision=e.authorship_evidence.profile_revision,
        ),
        headers=c.HeadersModel(
            subject=h.subject,
            sentAt=h.sent_at,
            receivedAt=h.received_at,
            participants=[
                c.ParticipantModel(
                    role=p.role,  # type: ignore[arg-type]
                    address=p.address,
                    displayName=p.display_name,
                )
                for p in h.participants
            ],
            messageId=h.message_id,
            inReplyTo=list(h.in_reply_to),
            references=list(h.references),
            senderAuthentication=c.SenderAuthenticationModel(
                authenticatedDomain=auth.authenticated_domain,
                displayedAuthorDomain=auth.displayed_author_domain,
                authenticatedBy=auth.authenticated_by,  # type: ignore[arg-type]
                dmarc=auth.dmarc,
                verdictSource=auth.verdict_source,  # type: ignore[arg-type]
                verificationState=auth.verification_state,  # type: ignore[arg-type]
            ),
        ),
        body=c.BodyModel(
            availability=e.body.availability.value,
            plainText=_text(e.body.plain_text),
            sanitizedHtml=_text(e.body.sanitized_html) if e.body.sanitized_html else None,
        ),
        attachments=[
            c.AttachmentModel(
                partId=a.part_id,
                fileName=a.file_name,
                wasFileNameNormalized=a.was_file_name_normalized,
                mediaType=a.media_type,
                sizeBytes=a.size_octets,
                downloadState=a.download_state.value,
                downloadUrl=a.download_url,
                downloadExpiresAt=a.download_expires_at,
            )
            for a in e.attachments
        ],
        attachmentCounts=(
            c.AttachmentCountsModel(
                attachmentCount=e.attachment_counts.attachment_count,
                inlineResourceCount=e.attachment_counts.inline_resource_count,
            )
            if e.attachment_counts is not None
            else None
        ),
        remoteFlags=_flags(e.flags),
        thread=_thread(e.thread),
    )


def content(read: v.ContentRead) -> c.GetEmailContentResult:
    return c.GetEmailContentResult(
        emails=[
            c.EmailEntryModel(
                storedEmailId=str(entry.stored_email_id),
                content=_content(entry.content) if entry.content is not None else None,
                failure=(
                    c.FailureModel(code=entry.failure.code, message=entry.failure.message)
                    if entry.failure is not None
                    else None
                ),
            )
            for entry in read.emails
        ],
        unreadThreadMessages=[str(i) for i in read.unread_thread_messages],
    )


def saved_content(read: v.ContentRead) -> c.GetEmailContentSavingResult:
    return c.GetEmailContentSavingResult(
        **dict(content(read)),
        savedFile=(
            c.SavedFileModel(
                path=read.saved.path,
                mediaType=read.saved.media_type,
                sizeBytes=read.saved.size_octets,
            )
            if read.saved is not None
            else None
        ),
    )


def answer(result: QuestionAnswer) -> AskMailResult:
    return AskMailResult(
        answer=result.answer,
        citations=[
            CitationModel(
                storedEmailId=str(c.stored_email_id),
                accountId=c.account_id,
                accountDisplayName=c.account_display_name,
                folderAlias=c.folder_alias,
                subject=c.subject,
                receivedAt=c.received_at,
                senderVerification=_verification(
                    v.SenderVerification(c.author_authentication, c.deployment_trust)
                ),
                machineAuthorship=_authorship(
                    v.MachineAuthorship(c.authorship_state, c.authorship_likelihood)
                ),
            )
            for c in result.citations
        ],
        answerTruncated=result.answer_truncated,
        citationsTruncated=result.citations_truncated,
        retrievalTruncated=result.retrieval_truncated,
    )
