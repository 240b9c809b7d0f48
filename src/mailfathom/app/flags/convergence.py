"""Carrying durable mutation records to the owner's mailbox, inside a synchronization run.

Records are grouped per folder, kind and value, so one flag command covers every message that
asks for the same thing. Where the server keeps mod-sequences the command carries the
mod-sequence the local copy observed (UNCHANGEDSINCE): a message the server changed after
that is reported back rather than overwritten, and the record is dead-lettered (the change the
server made meanwhile wins; docs/mcp.md states the rule). A keyword the folder will not keep
permanently, a message that is gone, and the attempts spent dead-letter a record too; every
other record ends completed.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import structlog

from mailfathom.app.flags.ports import FlagWriter, MutationLedger, OpenMutation
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import SyncError
from mailfathom.domain.mutations import (
    MAX_ATTEMPTS,
    MutationFailure,
    MutationKind,
    MutationState,
    keywords_of,
)

# The kinds a flag command carries; a move is carried by the moves' own convergence.
FLAG_KINDS = frozenset(MutationKind) - {MutationKind.MOVE}

log = structlog.get_logger("mailfathom.flags")

_SEEN = "\\Seen"
_FLAGGED = "\\Flagged"


def _folder_gone(writer: FlagWriter, remote_name: str) -> bool:
    """Whether the server no longer lists the folder; one that cannot be asked is not taken
    to have deleted it."""
    try:
        return not writer.holds_folder(remote_name)
    except SyncError:
        return False


class MutationConvergence:
    def __init__(
        self, ledger: MutationLedger, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._ledger = ledger
        self._clock = clock

    def pending(self, account_id: str) -> bool:
        return self._ledger.open_mark(account_id)[0] > 0

    def mark(self, account_id: str) -> tuple[int, int]:
        """What the store holds open for the account, compared between two readings to tell
        that a change was recorded meanwhile, by this process or another."""
        return self._ledger.open_mark(account_id)

    def converge(
        self, account_id: str, writer: FlagWriter, folder_ids: Sequence[int] | None = None
    ) -> int:
        """Issue the account's open records (of `folder_ids` when given); answers how many
        records reached an ending."""
        records = [
            r
            for r in self._ledger.open_mutations(account_id)
            if (folder_ids is None or r.folder_id in folder_ids) and r.kind in FLAG_KINDS
        ]
        gone = [r.record_id for r in records if r.uid is None]
        self._end(gone, MutationFailure.MESSAGE_GONE)
        groups: dict[tuple[str, MutationKind, str], list[OpenMutation]] = defaultdict(list)
        for record in records:
            if record.uid is not None:
                groups[(record.remote_name, record.kind, record.value)].append(record)
        ended = len(gone)
        for (remote_name, kind, value), members in groups.items():
            ended += self._issue(account_id, writer, remote_name, kind, value, members)
        return ended

    def _issue(
        self,
        account_id: str,
        writer: FlagWriter,
        remote_name: str,
        kind: MutationKind,
        value: str,
        members: list[OpenMutation],
    ) -> int:
        folder_id = members[0].folder_id
        ids = [m.record_id for m in members]
        self._ledger.begin(ids, self._clock())
        by_uid = {m.uid: m for m in members if m.uid is not None}
        uids = sorted(by_uid)
        try:
            if kind in (MutationKind.ADD_KEYWORDS, MutationKind.SET_KEYWORDS):
                creatable, permanent = writer.permanent_keywords(remote_name)
                if not creatable and not keywords_of(value) <= permanent:
                    self._end(ids, MutationFailure.KEYWORD_NOT_PERMANENT)
                    return len(ids)
            since = _observed(members)
            outcome = self._write(writer, remote_name, kind, value, uids, since)
            if outcome[2]:
                self._ledger.advance(folder_id, outcome[2])
        except SyncError:
            log.warning("flags.change_not_issued", account=account_id, change=kind.value)
            if _folder_gone(writer, remote_name):
                # The messages went with their folder, deleted on the server since the
                # local copy read it: no later attempt can succeed.
                self._end(ids, MutationFailure.MESSAGE_GONE)
                return len(ids)
            spent = [m.record_id for m in members if m.attempts + 1 >= MAX_ATTEMPTS]
            self._end(spent, MutationFailure.ATTEMPTS_SPENT)
            return len(spent)
        # A message changed after the local copy saw it that now holds the asked value lost
        # nothing of what anybody did: it completes (a killed run's own command is one).
        if outcome[1]:
            now = writer.current_flags(remote_name, sorted(outcome[1]))
            kept = {u for u in outcome[1] if u in now and _holds(now[u], kind, value)}
            outcome = (outcome[0] | kept, outcome[1] - kept, outcome[2])
        modified = [by_uid[u].record_id for u in outcome[1]]
        missing = [by_uid[u].record_id for u in uids if u not in outcome[0] and u not in outcome[1]]
        done = [by_uid[u].record_id for u in outcome[0]]
        self._end(modified, MutationFailure.CHANGED_ON_SERVER)
        self._end(missing, MutationFailure.MESSAGE_GONE)
        self._ledger.settle(done, MutationState.COMPLETED, None, self._clock())
        for record_id in done:
            log.info("flags.change_completed", account=account_id, change_record_id=str(record_id))
        return len(ids)

    def _write(
        self,
        writer: FlagWriter,
        remote_name: str,
        kind: MutationKind,
        value: str,
        uids: list[int],
        since: dict[int, int] | None,
    ) -> tuple[frozenset[int], frozenset[int], dict[int, int]]:
        if kind is MutationKind.SET_SEEN or kind is MutationKind.SET_FLAGGED:
            flag = _SEEN if kind is MutationKind.SET_SEEN else _FLAGGED
            op = "+" if value == "true" else "-"
            result = writer.store_flags(remote_name, uids, op, [flag], since)
            return result.applied, result.modified, dict(result.left)
        named = sorted(keywords_of(value))
        if kind is MutationKind.ADD_KEYWORDS or kind is MutationKind.REMOVE_KEYWORDS:
            op = "+" if kind is MutationKind.ADD_KEYWORDS else "-"
            result = writer.store_flags(remote_name, uids, op, named, since)
            return result.applied, result.modified, dict(result.left)
        # set-keywords: take off what is held and not named, then add what is named; the
        # second command is this run's own follow-up, so it is asked unconditionally.
        held = writer.current_keywords(remote_name, uids)
        applied: set[int] = set(held)
        modified: set[int] = set()
        left: dict[int, int] = {}
        stale = sorted({k for u in held for k in held[u] if k not in named})
        if stale:
            result = writer.store_flags(remote_name, sorted(held), "-", stale, since)
            modified |= result.modified
            applied &= result.applied
            left.update(result.left)
        if named and applied:
            result = writer.store_flags(remote_name, sorted(applied), "+", named, None)
            applied &= result.applied
            left.update(result.left)
        return frozenset(applied), frozenset(modified), left

    def _end(self, record_ids: list[uuid.UUID], failure: MutationFailure) -> None:
        if record_ids:
            self._ledger.settle(
                record_ids, MutationState.DEAD_LETTERED, int(failure), self._clock()
            )


def _holds(flags: RemoteFlags, kind: MutationKind, value: str) -> bool:
    """Whether a message with these flags already shows what the record asks."""
    if kind is MutationKind.SET_SEEN:
        return flags.seen == (value == "true")
    if kind is MutationKind.SET_FLAGGED:
        return flags.flagged == (value == "true")
    named = keywords_of(value)
    if kind is MutationKind.ADD_KEYWORDS:
        return named <= flags.keywords
    if kind is MutationKind.REMOVE_KEYWORDS:
        return not named & flags.keywords
    return flags.keywords == named


def _observed(members: Sequence[OpenMutation]) -> dict[int, int] | None:
    """The mod-sequence the local copy observed per UID, or None when one of them has none
    (the server keeps none, or the copy never saw one)."""
    if any(m.modseq is None or m.uid is None for m in members):
        return None
    return {m.uid: m.modseq for m in members if m.uid is not None and m.modseq is not None}
