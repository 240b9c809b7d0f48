"""Mutation records in memory: `MutationStore`, `MutationLedger`, `MutationRecords` and
`OrganizeStore` (the same records, asked for many emails at once), over the in-memory local
copy a new record's value is shown on."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from fakes.local_copy import InMemoryLocalCopy
from mailfathom.app.flags.ports import (
    MutationLedger,
    MutationRecords,
    MutationStore,
    MutationTarget,
    OpenMutation,
    RequestIdentityTaken,
)
from mailfathom.app.organize.ports import OrganizeStore
from mailfathom.domain.mutation_requests import request_digest, retried
from mailfathom.domain.mutations import (
    OPEN_STATES,
    MutationKind,
    MutationRecord,
    MutationState,
    RequestedMutation,
    keywords_of,
)


class InMemoryMutationStore:
    def __init__(self, local: InMemoryLocalCopy) -> None:
        self._local = local
        self._records: list[MutationRecord] = []

    # -- MutationStore ---------------------------------------------------------------------

    def target(
        self, stored_email_id: uuid.UUID, folder_ids: Sequence[int]
    ) -> MutationTarget | None:
        with self._local.lock:
            message = self._local.messages.get(stored_email_id)
            if message is None or message.folder_id not in folder_ids:
                return None
            if not self._local.current(message):
                return None
            alias = self._local.folders[message.folder_id].alias
            return MutationTarget(stored_email_id, message.account_id, message.folder_id, alias)

    def record(
        self,
        target: MutationTarget,
        requester: str,
        request_id: str,
        asked: Sequence[RequestedMutation],
        now: datetime,
    ) -> list[MutationRecord]:
        return self._write([(target, m) for m in asked], requester, request_id, now)

    # -- OrganizeStore ---------------------------------------------------------------------

    def targets(
        self, stored_email_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, MutationTarget]:
        found = {i: self.target(i, folder_ids) for i in stored_email_ids}
        return {i: target for i, target in found.items() if target is not None}

    def record_each(
        self,
        targets: Sequence[MutationTarget],
        requester: str,
        request_id: str,
        asked: RequestedMutation,
        now: datetime,
    ) -> list[MutationRecord]:
        return self._write([(t, asked) for t in targets], requester, request_id, now)

    def _write(
        self,
        asked: Sequence[tuple[MutationTarget, RequestedMutation]],
        requester: str,
        request_id: str,
        now: datetime,
    ) -> list[MutationRecord]:
        """One record per (email, value), or the ones this same request wrote under the
        requester and request identity; another request's under it on one of these emails
        raise `RequestIdentityTaken`. All or nothing, as one commit is."""
        named = [(target.stored_email_id, mutation) for target, mutation in asked]
        digest = request_digest(named)
        emails = {email for email, _ in named}
        with self._local.lock:
            held = [
                r
                for r in self._records
                if (r.requester, r.request_id) == (requester, request_id)
                and r.stored_email_id in emails
            ]
            if held:
                answered = retried(held, named, digest)
                if answered is None:
                    raise RequestIdentityTaken
                return answered
            written = [
                MutationRecord(
                    record_id=uuid.uuid4(),
                    kind=mutation.kind,
                    account_id=target.account_id,
                    stored_email_id=target.stored_email_id,
                    folder_id=target.folder_id,
                    value=mutation.value,
                    requester=requester,
                    request_id=request_id,
                    state=MutationState.PENDING,
                    attempts=0,
                    last_error_code=None,
                    created_at=now,
                    updated_at=now,
                    request_digest=digest,
                )
                for target, mutation in asked
            ]
            self._records.extend(written)
            for record in written:
                self._show(record)
            return written

    def _show(self, record: MutationRecord) -> None:
        """The local copy shows the asked value at once; a move shows nothing until the
        server holds the message in its new folder."""
        message = self._local.messages.get(record.stored_email_id)
        if message is None or record.kind is MutationKind.MOVE:
            return
        flags = message.flags
        if record.kind is MutationKind.SET_SEEN:
            message.flags = dataclasses.replace(flags, seen=record.value == "true")
            return
        if record.kind is MutationKind.SET_FLAGGED:
            message.flags = dataclasses.replace(flags, flagged=record.value == "true")
            return
        named = keywords_of(record.value)
        kept = set(flags.keywords)
        if record.kind in (MutationKind.REMOVE_KEYWORDS, MutationKind.SET_KEYWORDS):
            removing = record.kind is MutationKind.REMOVE_KEYWORDS
            kept = {k for k in kept if (k.casefold() in named) != removing}
        if record.kind in (MutationKind.ADD_KEYWORDS, MutationKind.SET_KEYWORDS):
            present = {k.casefold() for k in kept}
            kept |= {k for k in named if k not in present}
        message.flags = dataclasses.replace(flags, keywords=frozenset(kept))

    # -- MutationLedger --------------------------------------------------------------------

    def open_mutations(self, account_id: str) -> list[OpenMutation]:
        with self._local.lock:
            found = []
            for record in self._records:
                if record.account_id != account_id or record.state not in OPEN_STATES:
                    continue
                written_in = self._local.folders.get(record.folder_id)
                if written_in is None:
                    continue
                message = self._local.messages.get(record.stored_email_id)
                uid: int | None
                modseq: int | None
                if message is not None and self._local.current(message):
                    now_in = self._local.folders[message.folder_id]
                    folder_id, remote_name = now_in.folder_id, now_in.remote_name
                    uid, modseq = message.uid, message.modseq
                else:
                    folder_id, remote_name = written_in.folder_id, written_in.remote_name
                    uid = modseq = None
                found.append(
                    OpenMutation(
                        record_id=record.record_id,
                        kind=record.kind,
                        value=record.value,
                        folder_id=folder_id,
                        remote_name=remote_name,
                        uid=uid,
                        modseq=modseq,
                        attempts=record.attempts,
                    )
                )
            return found

    def open_mark(self, account_id: str) -> tuple[int, int]:
        with self._local.lock:
            open_ = [
                seq
                for seq, r in enumerate(self._records, start=1)
                if r.account_id == account_id and r.state in OPEN_STATES
            ]
            return len(open_), max(open_, default=0)

    def _change(
        self, record_ids: Collection[uuid.UUID], only_open: bool, **changes: object
    ) -> None:
        for n, record in enumerate(self._records):
            if record.record_id in record_ids and (record.state in OPEN_STATES or not only_open):
                self._records[n] = dataclasses.replace(record, **changes)  # type: ignore[arg-type]

    def begin(self, record_ids: Sequence[uuid.UUID], now: datetime) -> None:
        with self._local.lock:
            for record in [r for r in self._records if r.record_id in record_ids]:
                self._change(
                    {record.record_id},
                    False,
                    state=MutationState.CONVERGING,
                    attempts=record.attempts + 1,
                    updated_at=now,
                )

    def settle(
        self,
        record_ids: Sequence[uuid.UUID],
        state: MutationState,
        error_code: int | None,
        now: datetime,
    ) -> None:
        with self._local.lock:
            self._change(
                set(record_ids), True, state=state, last_error_code=error_code, updated_at=now
            )

    def advance(self, folder_id: int, modseqs: Mapping[int, int]) -> None:
        with self._local.lock:
            for message in self._local.messages.values():
                raised = modseqs.get(message.uid)
                if (
                    message.folder_id == folder_id
                    and raised is not None
                    and self._local.current(message)
                    and (message.modseq is None or message.modseq < raised)
                ):
                    message.modseq = raised

    # -- MutationRecords -------------------------------------------------------------------

    def listing(
        self, limit: int | None, states: Sequence[MutationState], account_id: str | None
    ) -> list[MutationRecord]:
        with self._local.lock:
            chosen = [
                r
                for r in reversed(self._records)
                if r.state in states and account_id in (None, r.account_id)
            ]
            return chosen[:limit]

    def find(self, record_id: uuid.UUID) -> MutationRecord | None:
        with self._local.lock:
            return next((r for r in self._records if r.record_id == record_id), None)

    def revive(self, record_id: uuid.UUID, now: datetime) -> MutationRecord | None:
        with self._local.lock:
            record = self.find(record_id)
            if record is None or record.state is not MutationState.DEAD_LETTERED:
                return record
            self._change(
                {record_id},
                False,
                state=MutationState.PENDING,
                attempts=0,
                last_error_code=None,
                updated_at=now,
            )
            revived = self.find(record_id)
            assert revived is not None
            self._show(revived)
            return revived

    def folder_aliases(self, folder_ids: Collection[int]) -> dict[int, str]:
        with self._local.lock:
            return {i: self._local.folders[i].alias for i in folder_ids if i in self._local.folders}


_: MutationStore = InMemoryMutationStore(InMemoryLocalCopy())
____: OrganizeStore = InMemoryMutationStore(InMemoryLocalCopy())
__: MutationLedger = InMemoryMutationStore(InMemoryLocalCopy())
___: MutationRecords = InMemoryMutationStore(InMemoryLocalCopy())
