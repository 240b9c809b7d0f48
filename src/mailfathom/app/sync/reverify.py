"""Verifying and assessing stored mail again, through the ports synchronization uses.

Mail stored before a verifier or an assessor was wired reads as not yet verified and not
assessed; this walks an account's messages in storage order from their stored MIME and
records both readings, batch by batch. Each batch's readings commit together with the
position reached, so a run that is interrupted resumes after the last batch it recorded, and
a finished run forgets its position (the next run starts over).

A message stored by its header block alone has no MIME here to read (its header block was
never kept): it keeps what synchronization recorded, and is counted apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.shared.stored_mail_ports import ContentStore
from mailfathom.app.sync.trust_step import TrustPorts, TrustStep
from mailfathom.app.sync.types import PreparedMessage
from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.errors import ContentMissingError
from mailfathom.domain.message import NormalizedMessage
from mailfathom.domain.sender_verdict import SenderVerdict

REVERIFY_BATCH = 200


@dataclass(frozen=True, slots=True)
class StoredForTrust:
    """One stored message as reverification reads it: its row and where its MIME is (None:
    only its header block was ever fetched)."""

    seq: int
    content_key: str | None


TrustRecord = tuple[int, SenderVerdict | None, AuthorshipReading | None]


class TrustRecords(Protocol):
    """The stored readings and how far reverification has come, per account."""

    def position(self, account_id: str) -> int | None:
        """The last message (`seq`) an unfinished run recorded, or None."""
        ...

    def progress(self, account_id: str, after_seq: int) -> tuple[int, int]:
        """(messages the account holds, of them at or before `after_seq`)."""
        ...

    def stored_after(self, account_id: str, after_seq: int, limit: int) -> list[StoredForTrust]:
        """The account's next messages after `after_seq`, in `seq` order."""
        ...

    def record(
        self, account_id: str, records: Sequence[TrustRecord], after_seq: int, at: datetime
    ) -> None:
        """Replace the readings of `records` and note `after_seq` as reached, in one
        transaction. A message removed meanwhile is skipped."""
        ...

    def finish(self, account_id: str) -> None:
        """Forget the account's position: the run is complete."""
        ...

    def unrecorded(self, account_id: str, after_seq: int, limit: int) -> list[StoredForTrust]:
        """The account's messages after `after_seq` with stored MIME and no readings recorded
        at all, in `seq` order: what a pass left to the backfill, or stored before anything
        was read."""
        ...

    def fill_in(self, account_id: str, records: Sequence[TrustRecord]) -> None:
        """Record these readings of the account's messages, a message removed meanwhile
        skipped; a record with neither reading is kept too, so that a message whose content
        cannot be read is not asked about again (it reads as not yet verified and not
        assessed)."""
        ...


@dataclass(frozen=True, slots=True)
class ReverifyReport:
    """Counts only: messages read again, those stored without MIME, those whose stored
    content could not be read, and how many an earlier run had already done."""

    reverified: int
    without_content: int
    unreadable: int
    resumed_after: int


Progress = Callable[[int, int], None]


class StoredMailReverification:
    def __init__(
        self,
        records: TrustRecords,
        content: ContentStore,
        normalize: Callable[[bytes], NormalizedMessage],
        *,
        clock: Callable[[], datetime],
        batch: int = REVERIFY_BATCH,
    ) -> None:
        self._records = records
        self._content = content
        self._normalize = normalize
        self._clock = clock
        self._batch = batch

    def run(
        self, account_id: str, ports: TrustPorts, progress: Progress | None = None
    ) -> ReverifyReport:
        """Read every stored message of the account again, resuming where an interrupted run
        stopped; `progress(done, total)` follows it."""
        step = TrustStep(ports)
        start = self._records.position(account_id) or 0
        total, done = self._records.progress(account_id, start)
        resumed = done
        reverified = without = unreadable = 0
        if progress is not None:
            progress(done, total)
        after = start
        while True:
            batch = self._records.stored_after(account_id, after, self._batch)
            if not batch:
                break
            records: list[TrustRecord] = []
            for stored in batch:
                raw = self._raw(stored)
                if stored.content_key is None:
                    without += 1
                elif raw is None:
                    unreadable += 1
                else:
                    normalized = self._normalize(raw)
                    verdict, reading = step.readings_of(
                        raw, PreparedMessage(stored.content_key, normalized)
                    )
                    records.append((stored.seq, verdict, reading))
            after = batch[-1].seq
            self._records.record(account_id, records, after, self._clock())
            reverified += len(records)
            done += len(batch)
            if progress is not None:
                progress(done, total)
        self._records.finish(account_id)
        return ReverifyReport(reverified, without, unreadable, resumed)

    def fill(
        self, account_id: str, ports: TrustPorts, limit: int, after_seq: int = 0
    ) -> tuple[int, int]:
        """Read up to `limit` of the account's messages after `after_seq` that have no
        readings yet (the backfill); answers how many were looked at (0 when none is left)
        and the last one's `seq`, where the next call may start."""
        batch = self._records.unrecorded(account_id, after_seq, limit)
        if not batch:
            return 0, after_seq
        step = TrustStep(ports)
        records: list[TrustRecord] = []
        for stored in batch:
            raw = self._raw(stored)
            if raw is None or stored.content_key is None:
                records.append((stored.seq, None, None))
                continue
            verdict, reading = step.readings_of(
                raw, PreparedMessage(stored.content_key, self._normalize(raw))
            )
            records.append((stored.seq, verdict, reading))
        self._records.fill_in(account_id, records)
        return len(batch), batch[-1].seq

    def _raw(self, stored: StoredForTrust) -> bytes | None:
        if stored.content_key is None:
            return None
        try:
            return self._content.get(stored.content_key)
        except ContentMissingError:
            return None
