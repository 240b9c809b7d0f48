"""Carrying move records to the owner's mailbox, inside a synchronization run.

Records are grouped per source and destination folder, so one command moves every message
that goes the same way. Where the server offers MOVE (RFC 6851) it is used; otherwise COPY,
then STORE \\Deleted and UID EXPUNGE of exactly the copied UIDs (RFC 4315), never a bare
EXPUNGE; a server with neither dead-letters the record and nothing is touched. The copy is
found in the destination by the COPYUID the server answered, else by Message-ID among the
UIDs the destination gave out since the command, and the stored row is re-pointed at it, so
the email keeps its identifier and conversation and the destination's next pass finds it
known. An original is taken out only once its copy is confirmed.

Before the command, the source UID and the destination's UIDNEXT are noted on the record: an
attempt interrupted after the copy is finished on retry by finding that copy, never by copying
again.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import structlog

from mailfathom.app.organize.ports import MoveLedger, MoveWriter, OpenMove
from mailfathom.domain.errors import SyncError
from mailfathom.domain.mutations import MAX_ATTEMPTS, MutationFailure, MutationState

log = structlog.get_logger("mailfathom.organize")

# At most this many moves of one email are carried one after another in one run.
MAX_ROUNDS = 8


class MoveConvergence:
    def __init__(
        self, ledger: MoveLedger, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._ledger = ledger
        self._clock = clock

    def converge(self, account_id: str, writer: MoveWriter) -> int:
        """Carry the account's open move records; answers how many reached an ending.

        An email with several open moves has them carried one after another, oldest first,
        each from where the one before it left the email: a round carries the oldest open
        move of every email, and the next round reads the records again. An email whose
        move did not reach an ending in a round waits for the next run with the rest of its
        moves, so a failing server is not asked again and again within one run."""
        ended = 0
        carried: set[uuid.UUID] = set()
        held: set[uuid.UUID] = set()
        for _ in range(MAX_ROUNDS):
            records = self._ledger.open_moves(account_id)
            held.update(r.stored_email_id for r in records if r.record_id in carried)
            oldest: dict[uuid.UUID, OpenMove] = {}
            for record in records:
                if record.stored_email_id not in held:
                    oldest.setdefault(record.stored_email_id, record)
            if not oldest:
                break
            done, resourced = self._round(writer, account_id, list(oldest.values()))
            ended += done
            carried.update(r.record_id for r in oldest.values() if r.record_id not in resourced)
            if len(records) == len(oldest) and not resourced:
                break
        return ended

    def _round(
        self, writer: MoveWriter, account_id: str, records: Sequence[OpenMove]
    ) -> tuple[int, set[uuid.UUID]]:
        """Carry one move of each email; answers how many ended, and the records that were
        given a new source and wait for the next round."""
        ended = 0
        groups: dict[tuple[int, int], list[OpenMove]] = defaultdict(list)
        resourced: dict[uuid.UUID, int] = {}
        for record in records:
            if record.destination_remote is None:
                self._end([record], MutationFailure.FOLDER_GONE)
                ended += 1
            elif record.row_folder_id is None or record.row_uid is None:
                self._end([record], MutationFailure.MESSAGE_GONE)
                ended += 1
            elif record.row_folder_id == record.destination_folder_id:
                ended += self._finish_placed(writer, record)
            elif record.row_folder_id != record.source_folder_id:
                if record.noted_source is None:
                    # An earlier move of the email took it elsewhere after this one was
                    # asked: this one starts from where the email is now.
                    resourced[record.record_id] = record.row_folder_id
                else:
                    # Begun, and the email was moved on since: nothing is left to do.
                    self._complete([record])
                    ended += 1
            else:
                groups[(record.source_folder_id, record.destination_folder_id)].append(record)
        for members in groups.values():
            ended += self._move_group(account_id, writer, members)
        if resourced:
            self._ledger.resource(resourced, self._clock())
        return ended, set(resourced)

    def _finish_placed(self, writer: MoveWriter, record: OpenMove) -> int:
        """The row already names the copy: take the original out if it is still there."""
        if record.noted_source is not None:
            try:
                self._ledger.begin([record.record_id], self._clock())
                uidvalidity, uid = record.noted_source
                if writer.present(record.source_remote, [uid], uidvalidity):
                    writer.remove_originals(record.source_remote, [uid])
            except SyncError:
                return self._spent([record])
        self._complete([record])
        return 1

    def _move_group(self, account_id: str, writer: MoveWriter, members: list[OpenMove]) -> int:
        if not writer.can_move():
            self._end(members, MutationFailure.MOVE_NOT_OFFERED)
            return len(members)
        self._ledger.begin([m.record_id for m in members], self._clock())
        source = members[0].source_remote
        destination = members[0].destination_remote
        assert destination is not None
        try:
            # The rows name UIDs of the source's stored UIDVALIDITY, one for all of them.
            uidvalidity = next((m.row_uidvalidity for m in members if m.row_uidvalidity), 0)
            present = writer.present(source, [m.row_uid for m in members if m.row_uid], uidvalidity)
            placed = self._found_earlier(writer, destination, members)
            waiting = [m for m in members if m.record_id not in placed and m.row_uid in present]
            going = {m.record_id for m in waiting}
            gone = [m for m in members if m.record_id not in placed and m.record_id not in going]
            if waiting:
                placed.update(self._transfer(writer, source, destination, waiting))
            unconfirmed = [m for m in waiting if m.record_id not in placed]
            if placed:
                self._ledger.repoint(
                    {
                        m.stored_email_id: placed[m.record_id]
                        for m in members
                        if m.record_id in placed
                    },
                    members[0].destination_folder_id,
                    writer.destination(destination)[0],
                )
                originals = [
                    m.row_uid
                    for m in members
                    if m.record_id in placed and m.row_uid is not None and m.row_uid in present
                ]
                if originals and writer.present(source, originals, uidvalidity):
                    writer.remove_originals(source, originals)
        except SyncError:
            log.warning("organize.move_not_issued", account=account_id)
            if self._destination_gone(writer, destination):
                self._end(members, MutationFailure.FOLDER_GONE)
                return len(members)
            return self._spent(members)
        self._complete([m for m in members if m.record_id in placed])
        self._end(unconfirmed, MutationFailure.MOVE_NOT_CONFIRMED)
        self._end(gone, MutationFailure.MESSAGE_GONE)
        self._ledger.forget([m.stored_email_id for m in gone])
        return len(members)

    @staticmethod
    def _destination_gone(writer: MoveWriter, destination: str) -> bool:
        """Whether a failed attempt failed because the server no longer has the destination
        (deleted there since it was mapped): no later attempt can succeed, so the record ends
        now rather than after every attempt was spent. A server that cannot be asked is not
        taken to have deleted it."""
        try:
            return not writer.holds_folder(destination)
        except SyncError:
            return False

    def _found_earlier(
        self, writer: MoveWriter, destination: str, members: Sequence[OpenMove]
    ) -> dict[uuid.UUID, int]:
        """Copies an interrupted attempt already made, found among the UIDs the destination
        gave out after it noted UIDNEXT."""
        found: dict[uuid.UUID, int] = {}
        current: int | None = None
        for m in members:
            if m.noted_destination is None or m.message_id is None:
                continue
            if current is None:
                current = writer.destination(destination)[0]
            if m.noted_destination[0] != current:
                continue
            uid = writer.find(destination, m.noted_destination[1], m.message_id)
            if uid is not None:
                found[m.record_id] = uid
        return found

    def _transfer(
        self, writer: MoveWriter, source: str, destination: str, waiting: Sequence[OpenMove]
    ) -> dict[uuid.UUID, int]:
        uidvalidity, uid_next = writer.destination(destination)
        self._ledger.note(
            {
                m.record_id: (m.row_uidvalidity or 0, m.row_uid)
                for m in waiting
                if m.row_uid is not None
            },
            (uidvalidity, uid_next),
            self._clock(),
        )
        mapping = writer.transfer(source, [m.row_uid for m in waiting if m.row_uid], destination)
        placed: dict[uuid.UUID, int] = {}
        for m in waiting:
            uid = mapping.get(m.row_uid) if m.row_uid is not None else None
            if uid is None and m.message_id is not None:
                uid = writer.find(destination, uid_next, m.message_id)
            if uid is not None:
                placed[m.record_id] = uid
        return placed

    def _spent(self, members: Sequence[OpenMove]) -> int:
        spent = [m for m in members if m.attempts + 1 >= MAX_ATTEMPTS]
        self._end(spent, MutationFailure.ATTEMPTS_SPENT)
        return len(spent)

    def _complete(self, members: Sequence[OpenMove]) -> None:
        if members:
            ids = [m.record_id for m in members]
            self._ledger.settle(ids, MutationState.COMPLETED, None, self._clock())
            for record_id in ids:
                log.info("organize.move_completed", change_record_id=str(record_id))

    def _end(self, members: Sequence[OpenMove], failure: MutationFailure) -> None:
        if members:
            self._ledger.settle(
                [m.record_id for m in members],
                MutationState.DEAD_LETTERED,
                int(failure),
                self._clock(),
            )
