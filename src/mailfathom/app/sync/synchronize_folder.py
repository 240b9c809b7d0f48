"""Bringing the local copy of one folder up to date with its mailbox.

The pass is written so that it can be killed at any instant and simply run again:
- new messages are committed in batches keyed by (folder, UIDVALIDITY, UID), so a repeated
  batch inserts nothing twice, and the UIDs still to fetch are always "on the server, not
  stored" rather than "after the last one we remember";
- the folder's mod-sequence is recorded only after everything it covers was applied, so an
  interrupted pass asks for the same changes again;
- raw MIME is made durable before the row naming it commits.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import datetime

import structlog

from mailfathom.app.shared.stored_mail_ports import ContentStore
from mailfathom.app.sync.contact_collection import collect_batch, support_may_have_moved
from mailfathom.app.sync.held_back import HeldBackSources, fetch_held_back
from mailfathom.app.sync.lease_recheck import LeaseRecheck
from mailfathom.app.sync.ports import (
    ContactCollector,
    MailboxSession,
    MessagePreparer,
    SyncStore,
    WithheldContacts,
)
from mailfathom.app.sync.trust_step import PendingTrust, TrustPorts, TrustStep
from mailfathom.app.sync.types import (
    EnvelopeItem,
    FetchedMessage,
    FolderRecord,
    FolderStatus,
    NewMessage,
    PreparedMessage,
    SyncReport,
)
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.errors import PassStopped

log = structlog.get_logger("mailfathom.sync")

ENVELOPE_CHUNK = 2000

ProgressCallback = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class SyncLimits:
    batch_messages: int = 500
    batch_octets: int = 4 * 1024 * 1024
    max_message_octets: int = 50 * 1024 * 1024
    storage_ceiling_octets: int | None = None
    # Batches fetched and handed to the preparer before the oldest of them is committed.
    # Three let the workers go on with the next batch while the one they finished is being
    # flushed to disk and the one before it committed.
    batches_in_flight: int = 3


class FolderSynchronizer:
    def __init__(
        self,
        store: SyncStore,
        content: ContentStore,
        preparer: MessagePreparer,
        *,
        clock: Callable[[], datetime],
        limits: SyncLimits,
        stored_octets: Callable[[], int] | None = None,
        collector: ContactCollector | None = None,
        own_addresses: frozenset[str] = frozenset(),
        withheld: WithheldContacts | None = None,
        trust: TrustPorts | None = None,
        recheck: LeaseRecheck | None = None,
    ) -> None:
        self._store = store
        self._content = content
        self._preparer = preparer
        self._clock = clock
        self._limits = limits
        self._progress: ProgressCallback | None = None
        self._stop: threading.Event | None = None
        self._stored_octets = stored_octets
        # The contact book, fed the people each committed batch names (None: the account
        # collects nobody); the account's own addresses, lower-cased, are never collected.
        self._collector = collector
        self._own_addresses = own_addresses
        # The book again, kept from holding what only withheld mail supports once a pass
        # may have changed which mail supports what.
        self._withheld = withheld
        # The sender verifier and authorship assessor, asked about each message stored
        # (None, or neither wired: nothing is recorded and it reads as never verified).
        self._trust = trust if trust is not None and trust.wired else None
        self._trust_step: TrustStep | None = None
        # Asked before content is deleted, which the store's fence does not cover.
        self._recheck = recheck

    def run(
        self,
        session: MailboxSession,
        folder: FolderRecord,
        progress: ProgressCallback | None = None,
        earlier_new: int = 0,
        stop: threading.Event | None = None,
    ) -> SyncReport:
        """One pass over the folder. `progress(alias, stored, total)` follows new mail;
        `earlier_new` is how many new messages the same pass brought to other folders before
        this one (a pass bringing many leaves their readings to the backfill). Once `stop` is
        set (the run's lease given up, or the worker stopping), the pass commits the batches
        already fetched and ends with `PassStopped` instead of fetching more."""
        self._progress = progress
        self._stop = stop
        status = session.select(folder.remote_name)
        report = SyncReport(folder_alias=folder.alias)
        reset = folder.uidvalidity is not None and folder.uidvalidity != status.uidvalidity
        if reset:
            report = self._adopt_new_uidvalidity(session, folder, status, report)
        elif folder.uidvalidity is not None and self._nothing_changed(session, folder, status):
            self._store.record_progress(
                folder.folder_id,
                uidvalidity=status.uidvalidity,
                highest_modseq=status.highest_modseq,
                uid_next=status.uid_next,
                committed_at=self._clock(),
                push_supported=session.supports_idle,
            )
            return report
        elif folder.uidvalidity is not None:
            report = self._reconcile_known(session, folder, status, report)

        server_uids = session.search_uids()
        if folder.uidvalidity is None or reset or not self._uses_modseq(session, folder, status):
            stored = self._store.stored_uids(folder.folder_id, status.uidvalidity)
            gone = stored - set(server_uids)
            if gone:
                self._discard(self._store.remove_uids(folder.folder_id, status.uidvalidity, gone))
                report = replace(report, removed=report.removed + len(gone))
        else:
            stored = self._store.stored_uids(folder.folder_id, status.uidvalidity)
        new_uids = [uid for uid in server_uids if uid not in stored]
        report = self._fetch_new(session, folder, status.uidvalidity, new_uids, report, earlier_new)
        filled = fetch_held_back(
            session,
            HeldBackSources(
                self._store,
                self._content,
                self._preparer,
                self._room_left,
                TrustStep(self._trust) if self._trust is not None else None,
            ),
            folder.folder_id,
            status.uidvalidity,
        )
        report = replace(report, fetched_bodies=report.fetched_bodies + filled)
        if reset:
            self._discard(self._store.drop_stale(folder.folder_id, status.uidvalidity))
        if report.removed or reset:
            self._content.reclaim()
        self._store.record_progress(
            folder.folder_id,
            uidvalidity=status.uidvalidity,
            highest_modseq=status.highest_modseq,
            uid_next=status.uid_next,
            committed_at=self._clock(),
            push_supported=session.supports_idle,
        )
        if self._withheld is not None and support_may_have_moved(folder, report):
            self._withheld.forget_withheld()
        # A folder is named by its identifier and role, never its alias: a folder created
        # through organize_email carries the name a caller chose.
        log.info(
            "folder.synchronized",
            folder_id=folder.folder_id,
            role=folder.role,
            account=folder.account_id,
            stored=report.stored,
            fetched=report.fetched_bodies,
            flags=report.flags_updated,
            removed=report.removed,
            rekeyed=report.rekeyed,
            reset=report.uidvalidity_reset,
            contacts=report.contacts_collected,
        )
        return report

    # -- deciding what changed -----------------------------------------------------------

    @staticmethod
    def _uses_modseq(session: MailboxSession, folder: FolderRecord, status: FolderStatus) -> bool:
        return (
            session.supports_qresync
            and folder.highest_modseq is not None
            and status.highest_modseq is not None
        )

    def _nothing_changed(
        self, session: MailboxSession, folder: FolderRecord, status: FolderStatus
    ) -> bool:
        """With CONDSTORE every flag change, arrival and expunge raises HIGHESTMODSEQ
        (RFC 7162 section 3.1.2), so an unchanged value with an unchanged UIDNEXT means the
        folder is exactly as last recorded."""
        return (
            self._uses_modseq(session, folder, status)
            and status.highest_modseq == folder.highest_modseq
            and status.uid_next == folder.uid_next
            and not self._store.holds_back(folder.folder_id, status.uidvalidity)
        )

    def _reconcile_known(
        self,
        session: MailboxSession,
        folder: FolderRecord,
        status: FolderStatus,
        report: SyncReport,
    ) -> SyncReport:
        now = self._clock()
        if self._uses_modseq(session, folder, status):
            assert folder.highest_modseq is not None
            changes = session.changes_since(folder.highest_modseq)
            updated = self._store.apply_flag_changes(
                folder.folder_id, status.uidvalidity, changes.changed, now
            )
            removed = 0
            if changes.vanished:
                keys = self._store.remove_uids(
                    folder.folder_id, status.uidvalidity, changes.vanished
                )
                self._discard(keys)
                removed = len(changes.vanished)
            return replace(report, flags_updated=updated, removed=removed)
        current = session.all_flags()
        known = self._store.stored_flags(folder.folder_id, status.uidvalidity)
        moved = [c for c in current if c.uid in known and known[c.uid].flags != c.flags]
        updated = self._store.apply_flag_changes(folder.folder_id, status.uidvalidity, moved, now)
        return replace(report, flags_updated=updated)

    def _adopt_new_uidvalidity(
        self,
        session: MailboxSession,
        folder: FolderRecord,
        status: FolderStatus,
        report: SyncReport,
    ) -> SyncReport:
        """The server renumbered the folder (RFC 3501 section 2.3.1.1). Rows are matched to
        the new UIDs by Message-ID and size and moved over, keeping their local identity;
        whatever cannot be matched is fetched anew, and rows left unmatched are dropped only
        after that, so no message is ever missing from the copy in between."""
        log.warning(
            "folder.uidvalidity_changed",
            folder_id=folder.folder_id,
            role=folder.role,
            account=folder.account_id,
        )
        stale = self._store.stale_identities(folder.folder_id, status.uidvalidity)
        already = self._store.stored_uids(folder.folder_id, status.uidvalidity)
        candidates = [u for u in session.search_uids() if u not in already]
        pairs: list[tuple[int, int]] = []
        for start in range(0, len(candidates), ENVELOPE_CHUNK):
            identity = session.fetch_identity(candidates[start : start + ENVELOPE_CHUNK])
            for uid in sorted(identity):
                seqs = stale.get(identity[uid])
                if seqs:
                    pairs.append((seqs.pop(0), uid))
        rekeyed = self._store.rekey(folder.folder_id, status.uidvalidity, pairs)
        current = session.all_flags()
        moved_uids = {uid for _, uid in pairs}
        self._store.apply_flag_changes(
            folder.folder_id,
            status.uidvalidity,
            [c for c in current if c.uid in moved_uids],
            self._clock(),
        )
        return replace(report, rekeyed=rekeyed, uidvalidity_reset=True)

    # -- fetching ------------------------------------------------------------------------

    def _fetch_new(
        self,
        session: MailboxSession,
        folder: FolderRecord,
        uidvalidity: int,
        uids: Sequence[int],
        report: SyncReport,
        earlier_new: int = 0,
    ) -> SyncReport:
        """Fetch, normalize and commit new messages batch by batch.

        Several batches are in flight at once: while some are being normalized (possibly in
        other processes), the next is fetched on a helper thread and the oldest is committed,
        so the server, the parser and the database are busy at the same time. The session is
        only ever used by one thread at a time: the helper while a fetch is out, this thread
        otherwise."""
        room = self._room_left()
        pending: deque[_PreparedBatch] = deque()
        total = len(uids)
        if not total:
            return report
        if self._progress is not None:
            self._progress(folder.alias, 0, total)
        self._preparer.expect(total)
        if self._trust is not None:
            self._trust_step = TrustStep.for_pass(self._trust, earlier_new + total)
        fetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="imap-fetch")
        fetching: Future[list[FetchedMessage]] | None = None
        stopped = False
        try:
            for start in range(0, len(uids), ENVELOPE_CHUNK):
                envelopes = session.fetch_envelopes(uids[start : start + ENVELOPE_CHUNK])
                for batch in self._batches(envelopes):
                    stopped = self._stop is not None and self._stop.is_set()
                    if stopped:
                        break
                    whole, held, room = self._split(batch, room)
                    fetching = fetcher.submit(self._fetch_batch, session, whole, held)
                    if len(pending) >= self._limits.batches_in_flight:
                        report = self._commit(folder, uidvalidity, pending.popleft(), report)
                        self._report_progress(folder, report, total)
                    fetched = fetching.result()
                    fetching = None
                    pending.append(self._hand_off(fetched, held))
                if stopped:
                    break
            while pending:
                report = self._commit(folder, uidvalidity, pending.popleft(), report)
                self._report_progress(folder, report, total)
        finally:
            if fetching is not None:
                # Something failed while a fetch was out: the session is the helper's until
                # that fetch ends, whatever becomes of it.
                with suppress(Exception):
                    fetching.result()
            fetcher.shutdown(wait=True)
            if self._trust_step is not None:
                self._trust_step.close()
                self._trust_step = None
        if stopped:
            raise PassStopped("The pass was told to stop; the batches fetched were committed.")
        return report

    def _report_progress(self, folder: FolderRecord, report: SyncReport, total: int) -> None:
        if self._progress is not None:
            self._progress(folder.alias, report.stored, total)

    def _batches(self, envelopes: Sequence[EnvelopeItem]) -> Iterator[list[EnvelopeItem]]:
        batch: list[EnvelopeItem] = []
        octets = 0
        for envelope in envelopes:
            if batch and (
                len(batch) >= self._limits.batch_messages
                or octets + envelope.size_octets > self._limits.batch_octets
            ):
                yield batch
                batch, octets = [], 0
            batch.append(envelope)
            octets += envelope.size_octets
        if batch:
            yield batch

    def _room_left(self) -> int | None:
        ceiling = self._limits.storage_ceiling_octets
        if ceiling is None or self._stored_octets is None:
            return None
        return ceiling - self._stored_octets()

    def _split(
        self, batch: Sequence[EnvelopeItem], room: int | None
    ) -> tuple[list[int], dict[int, ContentState], int | None]:
        """The UIDs of a batch to fetch whole, those held back (and why), and the room left."""
        whole: list[int] = []
        held: dict[int, ContentState] = {}
        for envelope in batch:
            if envelope.size_octets > self._limits.max_message_octets:
                held[envelope.uid] = ContentState.EXCEEDED_SIZE_LIMIT
            elif room is not None and envelope.size_octets > room:
                held[envelope.uid] = ContentState.AWAITING_HEADROOM
            else:
                whole.append(envelope.uid)
                if room is not None:
                    room -= envelope.size_octets
        return whole, held, room

    @staticmethod
    def _fetch_batch(
        session: MailboxSession, whole: list[int], held: dict[int, ContentState]
    ) -> list[FetchedMessage]:
        fetched = list(session.fetch_bodies(whole)) if whole else []
        fetched += list(session.fetch_headers(sorted(held))) if held else []
        return fetched

    def _hand_off(
        self, fetched: list[FetchedMessage], held: dict[int, ContentState]
    ) -> _PreparedBatch:
        """Give a fetched batch to the preparer, which makes its MIME durable and normalizes
        it."""
        preparing = self._preparer.start_batch([(m.raw, m.headers_only) for m in fetched])
        trust = None
        if self._trust_step is not None:
            trust = self._trust_step.begin(fetched, preparing)
        # The octets are the preparer's now (and the verifier's until it has read them);
        # holding them until the commit would only keep two batches of raw mail in memory.
        arrived = [(m.uid, m.size_octets, m.flags, m.modseq, m.received_at) for m in fetched]
        return _PreparedBatch(arrived, held, preparing, trust)

    def _commit(
        self,
        folder: FolderRecord,
        uidvalidity: int,
        prepared: _PreparedBatch,
        report: SyncReport,
    ) -> SyncReport:
        ready = prepared.preparing.result()
        held = prepared.held
        readings = prepared.trust.result() if prepared.trust is not None else None
        items = [
            NewMessage(
                uid=uid,
                size_octets=size,
                flags=flags,
                modseq=modseq,
                received_at=received_at,
                normalized=r.normalized,
                content_state=held.get(uid, ContentState.STORED),
                content_key=r.content_key,
                stored_text=r.stored_text,
                verdict=readings[i][0] if readings else None,
                authorship=readings[i][1] if readings else None,
            )
            for i, ((uid, size, flags, modseq, received_at), r) in enumerate(
                zip(prepared.fetched, ready, strict=True)
            )
        ]
        committed_at = self._clock()
        stored = self._store.add_messages(folder, uidvalidity, items, committed_at)
        collected = 0
        if self._collector is not None:
            collected = collect_batch(
                self._collector, self._own_addresses, folder, items, committed_at
            )
        states = list(prepared.held.values())
        return replace(
            report,
            fetched_bodies=report.fetched_bodies + len(prepared.fetched) - len(states),
            stored=report.stored + stored,
            oversized=report.oversized + states.count(ContentState.EXCEEDED_SIZE_LIMIT),
            deferred_for_headroom=report.deferred_for_headroom
            + states.count(ContentState.AWAITING_HEADROOM),
            contacts_collected=report.contacts_collected + collected,
        )

    def _discard(self, keys: Sequence[str]) -> None:
        if keys and self._recheck is not None:
            self._recheck.recheck()
        for key in keys:
            self._content.discard(key)


# What the commit needs of a fetched message: UID, size, flags, mod-sequence, arrival time.
_Arrived = tuple[int, int, RemoteFlags, int | None, datetime | None]


@dataclass(frozen=True, slots=True)
class _PreparedBatch:
    fetched: list[_Arrived]
    held: dict[int, ContentState]
    preparing: Future[list[PreparedMessage]]
    trust: PendingTrust | None = None
