"""Holding leases on background work and running the work of each lease held.

`LeaseLoop` is one worker's side of the sharing: every `lease_seconds / 3` it says it is alive,
renews what it holds, stops the work of a lease found taken over, and evens out its share. For
accounts (`fair`), with M accounts and N workers alive by their heartbeats, the workers sorted
by name take M // N each and the first M mod N of them one more (`fair_share`): a worker above
its share gives accounts up (their work stopped first), one below claims free or expired ones.
A deployment's single worker (the embedding worker) is one subject that whichever worker
claims first holds.

So that the workers of a fleet settle rather than hand accounts back and forth: a starting
worker is seen alive for one round before its first claim (workers started together count one
another and split the accounts once, and a late joiner takes only its share); work given up
is stopped and released off the round's thread, its lease renewed until the work ended (a pass
stops at its next batch boundary), so the round's heartbeat and renewals never wait on it.
Where one process is all that synchronizes (`serve` on SQLite) there is nobody to count, and
its loop claims in its first round (`settle=False`).

The work of each lease runs in a thread under the lease's fence (`Fencing.fenced`), so a write
it makes after losing the lease is refused; losing the lease (a renewal refused, or a write
refused) sets the work's own stop event, which every loop of the work watches. A stopping
worker leaves the fleet at once (`depart`, so the others count it gone at their next round),
stops the work of every lease and gives each lease back as soon as its work ended; whatever
work is still running `stop_seconds` after the stop has its lease given back anyway, so the
loop ends within that bound whatever the lease period (the process waits that long, plus the
few statements of giving back, before it exits). The fence refuses the writes that late work
attempts after the release, as it refuses those of a holder whose lease expired. A worker
killed without giving up its leases leaves them to expire: another worker claims them at its
next round after that, so a takeover follows within about one lease period and a third.

What a mail server is told cannot be fenced: a holder may issue a command and die before it
records the outcome, and the next holder carries the same record again. Each owner change is
written so that carrying it twice does what carrying it once does:

- Flags: STORE +FLAGS / -FLAGS (a Maildir rename) sets a state, not a toggle; issued twice it
  leaves the message as once, and the record completes when the next holder issues it again.
- Moves (`MoveConvergence`): before MOVE (or COPY + STORE \\Deleted + UID EXPUNGE) the
  source UID and the destination's UIDVALIDITY and UIDNEXT are written on the record, a
  fenced write. A holder that died after the command left that note: the next holder looks
  for the message among the destination's UIDs from the noted UIDNEXT by Message-ID, finds
  the copy, re-points the stored row at it and takes out an original that is still there,
  instead of copying again. A holder that lost its lease before noting cannot note (the write
  is refused) and so never sends the command.
- Folder creations (`FolderCreationConvergence`): the server name is noted before CREATE; a
  next holder finding that name on the server knows it for this record's own folder and
  completes the record instead of refusing a name already taken.
- Drafts-folder copies (`DraftFolderUpkeep`): the folder's UIDVALIDITY and UIDNEXT are noted
  before each APPEND; a copy whose answer never arrived is found by its Message-ID from that
  UID on rather than appended again.

A holder that is alive but stalled past its lease (not killed) is stopped by its first write
after the takeover; a command it was sending at that very moment can still reach the server
once, and the records above then find it done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import structlog

from mailfathom.app.shared.context_threads import context_thread
from mailfathom.app.sync.lease_ports import Fencing, Lease, LeaseKind, WorkLeases

log = structlog.get_logger("mailfathom.leases")

# How much of the lease period passes between two rounds of renewal.
ROUNDS_PER_LEASE = 3
# How long a stopping loop waits in all for the work of its leases to end before it gives the
# leases of work still running back anyway (the fence refuses what that work writes later).
STOP_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class LeaseWork:
    """What a loop holds leases on (`subjects`), and `run`, called in a thread of its own with
    the subject and a stop event for each lease claimed."""

    kind: LeaseKind
    subjects: Sequence[str]
    run: Callable[[str, threading.Event], None]
    fair: bool


@dataclass(slots=True, eq=False)
class _Held:
    lease: Lease
    stop: threading.Event
    thread: threading.Thread = field(init=False)
    # Set (under the loop's lock) once the work returned.
    ended: bool = False


class LeaseLoop:
    def __init__(
        self,
        leases: WorkLeases,
        fencing: Fencing,
        work: LeaseWork,
        *,
        worker: str,
        lease_seconds: float,
        settle: bool = True,
        stop_seconds: float = STOP_SECONDS,
    ) -> None:
        """`settle`: a fair loop's first claim waits one round, so loops started together
        count one another; without it (a store only one such process works on) the first
        round claims. `stop_seconds`: how long a stop waits for work before giving its
        leases back regardless."""
        self._leases = leases
        self._fencing = fencing
        self._work = work
        self.worker = worker
        self._lease = timedelta(seconds=lease_seconds)
        self._every = lease_seconds / ROUNDS_PER_LEASE
        self._held: dict[str, _Held] = {}
        # Work given up and still ending: its lease is renewed until it ended, then released.
        self._ending: dict[str, _Held] = {}
        self._enders: list[threading.Thread] = []
        self._offered = False
        self._announced = not settle
        self._stop_seconds = stop_seconds
        self._stopping = False
        self._lock = threading.Lock()
        # Notified when a work ends and when the loop starts stopping.
        self._changed = threading.Condition(self._lock)

    def held(self) -> list[str]:
        with self._lock:
            return sorted(self._held)

    def run(self, stop: threading.Event) -> None:
        """Hold leases and run their work until `stop` is set, then stop the work and give
        the leases up. Rounds keep their cadence whatever a round took."""
        last_round = time.monotonic()
        next_round = last_round
        try:
            while not stop.is_set():
                try:
                    self._round()
                    last_round = time.monotonic()
                except Exception as error:
                    log.warning(
                        "leases.round_failed", worker=self.worker, error=type(error).__name__
                    )
                    if time.monotonic() - last_round >= self._lease.total_seconds():
                        # Nothing was renewed for a lease period: another worker may hold
                        # these now, so their work stops (its writes would be refused).
                        self._abandon(list(self._held), patience=self._every)
                next_round = max(next_round + self._every, time.monotonic())
                stop.wait(next_round - time.monotonic())
        finally:
            self._give_back()

    def _give_back(self) -> None:
        """Leave the fleet, stop every work and give each lease back once its work ended,
        or, for work still running `stop_seconds` from now, regardless."""
        deadline = time.monotonic() + self._stop_seconds
        with self._lock:
            self._stopping = True
            pending = [*self._held.values(), *self._ending.values()]
            self._held.clear()
            self._ending.clear()
            self._changed.notify_all()
        for held in pending:
            held.stop.set()
        if self._work.fair:
            try:
                self._leases.depart(self.worker)
            except Exception as error:
                log.warning("leases.depart_failed", error=type(error).__name__)
        while pending:
            with self._lock:
                self._changed.wait_for(
                    lambda: any(h.ended for h in pending), deadline - time.monotonic()
                )
                ended = [h for h in pending if h.ended]
            given = ended or pending
            self._release(given, running=not ended)
            pending[:] = [h for h in pending if h not in given]
        for ender in self._enders:
            ender.join(max(0.0, deadline - time.monotonic()))

    def _round(self) -> None:
        if not self._offered:
            # Inside the round, so a store still unreachable at start is asked again.
            self._leases.offer(self._work.kind, list(self._work.subjects))
            self._offered = True
        now = self._leases.now()
        until = now + self._lease
        live = self._leases.beat(self.worker, now, until) if self._work.fair else [self.worker]
        with self._lock:
            ending = [e.lease for e in self._ending.values()]
        if self._held or ending:
            kept = self._leases.renew(
                self.worker, [h.lease for h in self._held.values()] + ending, now, until
            )
            for subject in [s for s in self._held if s not in kept]:
                log.warning("leases.lost", kind=self._work.kind.value, subject=subject)
                with self._lock:
                    lost = self._held.pop(subject)
                lost.stop.set()
        if not self._announced:
            # A starting worker is first seen alive for a round, so workers started together
            # count one another before claiming and split the subjects once.
            self._announced = True
            if self._work.fair:
                return
        share = fair_share(len(self._work.subjects), live, self.worker)
        if len(self._held) > share:
            self._give_up(sorted(self._held)[share:])
        elif len(self._held) < share:
            with self._lock:
                busy = set(self._held) | set(self._ending)
            free = [s for s in self._work.subjects if s not in busy]
            claimed = self._leases.claim(
                self.worker, self._work.kind, free, now, until, share - len(self._held)
            )
            for lease in claimed:
                log.info(
                    "leases.claimed",
                    kind=lease.kind.value,
                    subject=lease.subject,
                    fence=lease.fence,
                    worker=self.worker,
                )
                self._start(lease)

    def _give_up(self, subjects: list[str]) -> None:
        """Stop the work of `subjects` and give their leases up once it ended, off the round's
        thread: the rounds renew them meanwhile (a pass stops at its next batch boundary), so
        neither the leases kept nor the heartbeat wait on work that is ending, and the next
        holder starts only after this one stopped. Work still running a lease period later
        is left to its fence."""
        with self._lock:
            given = [self._held.pop(s) for s in subjects if s in self._held]
            for held in given:
                held.stop.set()
                self._ending[held.lease.subject] = held
        for held in given:
            ender = context_thread(self._end, held, name=f"lease-end-{held.lease.subject}")
            self._enders = [e for e in self._enders if e.is_alive()] + [ender]
            ender.start()

    def _end(self, held: _Held) -> None:
        with self._lock:
            self._changed.wait_for(
                lambda: held.ended or self._stopping, self._lease.total_seconds()
            )
            if self._ending.get(held.lease.subject) is not held:
                return  # a stop took it over
            del self._ending[held.lease.subject]
        self._release([held], running=not held.ended)

    def _release(self, given: list[_Held], *, running: bool) -> None:
        """Give the leases of `given` back; `running`: their work has not ended yet, and
        the fence refuses whatever it writes from now on."""
        try:
            self._leases.release(self.worker, [h.lease for h in given])
        except Exception as error:  # they expire instead
            log.warning("leases.release_failed", error=type(error).__name__)
            return
        for held in given:
            log.info(
                "leases.released",
                kind=held.lease.kind.value,
                subject=held.lease.subject,
                worker=self.worker,
                work_running=running,
            )

    def _start(self, lease: Lease) -> None:
        held = _Held(lease, threading.Event())
        held.thread = context_thread(self._fenced_run, held, name=f"lease-{lease.subject}")
        with self._lock:
            self._held[lease.subject] = held
        held.thread.start()

    def _fenced_run(self, held: _Held) -> None:
        lease, stop = held.lease, held.stop
        try:
            with self._fencing.fenced(self.worker, lease, stop.set):
                try:
                    self._work.run(lease.subject, stop)
                except Exception as error:
                    log.error(
                        "leases.work_failed", subject=lease.subject, error=type(error).__name__
                    )
        finally:
            with self._lock:
                held.ended = True
                self._changed.notify_all()

    def _abandon(self, subjects: list[str], *, patience: float) -> None:
        """Stop the work of `subjects` (waiting up to `patience` seconds in all for it to
        end) without giving the leases up: the store did not answer, so they expire."""
        with self._lock:
            dropped = [self._held.pop(s) for s in subjects if s in self._held]
        for held in dropped:
            held.stop.set()
        deadline = time.monotonic() + patience
        for held in dropped:
            held.thread.join(max(0.0, deadline - time.monotonic()))
        for held in dropped:
            log.info(
                "leases.abandoned",
                kind=held.lease.kind.value,
                subject=held.lease.subject,
                worker=self.worker,
            )


def fair_share(total: int, live: Sequence[str], worker: str) -> int:
    """`worker`'s share of `total` subjects among the `live` workers: M // N each, and one
    more for the first M mod N of them by name, so the shares add up to M exactly and no
    worker is left idle while another holds two more than it."""
    workers = sorted({*live, worker})
    base, extra = divmod(total, len(workers))
    return base + (1 if workers.index(worker) < extra else 0)
