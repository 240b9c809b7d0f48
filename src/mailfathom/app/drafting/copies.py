"""Keeping the owner's drafts folder in step with the drafts held here.

The draft is always written here first; only then is its copy appended, and a copy a later
revision replaced is taken out only after the new one is in, so the folder never shows the
owner nothing while something is held. Whatever a server refused or a lost connection left
undone is finished by the account's next synchronization pass (`finish`), and by the delivery
pass for a sent draft's copy (`remove_for_send`).

A copy taken out of a folder that is no longer the account's drafts folder, or that the server
refuses to take out, is left behind and forgotten: nothing here touches it again.

An APPEND can be stored by the server and its answer still be lost (a dropped connection, a
process that ended). Where the copy will land is written down before the APPEND is sent
(`DraftStore.note_append`), and whoever holds the filing claim next looks for that copy by the
draft's Message-ID from there on before appending anything (`_settle`): a copy found is
recorded as the one of the revision that was being appended, and taken out like any other
once it is replaced, given up or sent. Retrying without looking would leave a second copy.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import structlog

from mailfathom.app.drafting.ports import CopyRefused, CopyUnreachable, DraftFolders, DraftStore
from mailfathom.domain.drafts import (
    AppendMark,
    CopyPlace,
    CopyState,
    DeleteOutcome,
    Draft,
    DraftLife,
    PendingAppend,
)

log = structlog.get_logger("mailfathom.drafts")

# How long one call or pass may take to append a copy before another may try: longer than
# any IMAP round trip a configured timeout allows.
FILING_LEASE_SECONDS = 300.0


def _now() -> datetime:
    return datetime.now(UTC)


class DraftCopies:
    def __init__(
        self,
        store: DraftStore,
        folders: DraftFolders,
        clock: Callable[[], datetime] = _now,
    ) -> None:
        self._store = store
        self._folders = folders
        self._clock = clock

    def file(self, draft: Draft) -> Draft:
        """Append the current revision's copy when it has none, then take out the copies it
        replaced. Answers the draft as it stands afterwards; a copy that could not be
        appended leaves it held."""
        folder = self._folders.drafts_folder(draft.account_id)
        if folder is None or draft.life is not DraftLife.LIVE:
            return draft
        if draft.copy_state is CopyState.HELD and not self._append(draft, folder):
            return self._store.find(draft.draft_id) or draft
        current = self._store.find(draft.draft_id) or draft
        if current.copy_state is CopyState.FILED:
            for copy in current.superseded:
                self._take_out(current.account_id, current.draft_id, copy.revision, copy.place)
        return self._store.find(draft.draft_id) or current

    def _append(self, draft: Draft, folder: str) -> bool:
        """Append the copy of the revision `draft` holds, under a claim: while another call
        or pass is appending this draft's copy, nothing is appended here (a later pass
        files what is still missing). Answers whether the copy went in."""
        if not self._claim(draft):
            return False
        try:
            current = self._store.find(draft.draft_id)
            if current is None or current.life is not DraftLife.LIVE:
                return False
            current = self._settle(current)
            if current.copy_state is CopyState.FILED:
                return True  # the claim's previous holder filed it
            revision = current.revision

            def noting(mark: AppendMark) -> None:
                self._store.note_append(current.draft_id, PendingAppend(revision, mark))

            place = self._folders.append(
                current.account_id,
                folder,
                current.mime,
                f"{current.draft_id}.{revision}",
                noting,
            )
            self._store.settle_append(current.draft_id, revision, place)
            return True
        except (CopyRefused, CopyUnreachable) as failure:
            log.warning(
                "drafts.copy_not_appended", account=draft.account_id, reason=type(failure).__name__
            )
            return False
        finally:
            self._store.release_filing(draft.draft_id)

    def _claim(self, draft: Draft) -> bool:
        now = self._clock()
        return self._store.claim_filing(
            draft.draft_id, now, now + timedelta(seconds=FILING_LEASE_SECONDS)
        )

    def _settle(self, draft: Draft) -> Draft:
        """Look for the copy an append whose answer never came left, and record it, or clear
        the note when it never landed (or the folder no longer names it). Called under the
        filing claim. Raises `CopyUnreachable` while the server cannot be asked: the note
        stays for the next try."""
        pending = draft.pending_append
        if pending is None:
            return draft
        try:
            place = self._folders.find_copy(draft.account_id, pending.mark, draft.message_id)
        except CopyRefused:
            place = None  # the folder is gone or will not open: nothing of it can be named
        self._store.settle_append(draft.draft_id, pending.revision, place)
        if place is not None:
            log.info("drafts.lost_copy_found", account=draft.account_id)
        return self._store.find(draft.draft_id) or draft

    def _settle_claimed(self, draft: Draft) -> None:
        """`_settle` for a draft of any life, as a pass finds it, under the claim."""
        if not self._claim(draft):
            return
        try:
            current = self._store.find(draft.draft_id)
            if current is not None:
                self._settle(current)
        except CopyUnreachable:
            log.warning("drafts.lost_copy_not_looked_for", account=draft.account_id)
        finally:
            self._store.release_filing(draft.draft_id)

    def take_out_all(self, draft: Draft) -> DeleteOutcome:
        """Take every copy of a draft given up (or sent) out of the folder."""
        outcomes = {
            self._take_out(draft.account_id, draft.draft_id, c.revision, c.place)
            for c in draft.copies
        }
        for outcome in (DeleteOutcome.COPY_LEFT_BEHIND, DeleteOutcome.PENDING):
            if outcome in outcomes:
                return outcome
        return DeleteOutcome.DELETED

    def remove_for_send(self, outgoing_id: uuid.UUID) -> None:
        try:
            draft = self._store.find_sent(outgoing_id)
            if draft is not None:
                self.take_out_all(draft)
        except Exception as failure:  # the send is over; a later pass takes the copy out
            log.error("drafts.sent_copy_not_removed", error_type=type(failure).__name__)

    def finish(self, account_id: str) -> None:
        """What an earlier call left undone for the account: missing copies appended,
        replaced ones and those of drafts given up or delivered taken out. A copy whose
        APPEND answer was lost is looked for first, so it is recorded and taken out with the
        rest rather than appended again."""
        for draft in self._store.copy_work(account_id).to_settle:
            self._settle_claimed(draft)
        for draft in self._store.copy_work(account_id).to_file:
            self.file(draft)
        for draft_id, revision, place in self._store.copy_work(account_id).to_remove:
            owner = self._store.find(draft_id)
            if owner is None:
                continue
            if owner.life is DraftLife.LIVE and owner.copy_state is CopyState.HELD:
                continue  # the replaced copy stays until the new one is in
            self._take_out(account_id, draft_id, revision, place)

    def _take_out(
        self, account_id: str, draft_id: uuid.UUID, revision: int, place: CopyPlace
    ) -> DeleteOutcome:
        if self._folders.drafts_folder(account_id) != place.folder:
            self._store.forget_copy(draft_id, revision)
            log.warning("drafts.copy_left_behind", account=account_id, reason="folder_changed")
            return DeleteOutcome.COPY_LEFT_BEHIND
        try:
            self._folders.remove(account_id, place)
        except CopyRefused:
            self._store.forget_copy(draft_id, revision)
            log.warning("drafts.copy_left_behind", account=account_id, reason="refused")
            return DeleteOutcome.COPY_LEFT_BEHIND
        except CopyUnreachable:
            log.warning("drafts.copy_removal_pending", account=account_id)
            return DeleteOutcome.PENDING
        self._store.forget_copy(draft_id, revision)
        return DeleteOutcome.DELETED
