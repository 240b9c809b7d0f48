"""The backfill: reading, after the passes, the messages they stored without readings.

A pass gives its inline readings only a share of its time (`trust_step.py`); what it left,
and mail stored before any verifier or assessor was wired, is read here at a bounded duty
cycle: after a batch that took `t` seconds the backfill waits long enough for its own work to
stay near `duty` of one processor, so a pass running meanwhile keeps the rest. Until a
message is reached it reads as not yet verified and not assessed, which is what it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog

from mailfathom.app.sync.reverify import StoredMailReverification
from mailfathom.app.sync.trust_step import TrustPorts
from mailfathom.domain.config import AccountConfig

log = structlog.get_logger("mailfathom.sync")

BACKFILL_BATCH = 50
BACKFILL_DUTY = 0.25
BACKFILL_IDLE_SECONDS = 5.0


class TrustBackfill:
    def __init__(
        self,
        reverification: StoredMailReverification,
        ports_of: Callable[[AccountConfig], TrustPorts],
        *,
        batch: int = BACKFILL_BATCH,
        duty: float = BACKFILL_DUTY,
        idle_seconds: float = BACKFILL_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._reverification = reverification
        self._ports_of = ports_of
        self._batch = batch
        self._duty = duty
        self._idle_seconds = idle_seconds
        self._clock = clock

    def run_until_done(
        self,
        account: AccountConfig,
        progress: Callable[[int], None] | None = None,
        *,
        stop: threading.Event | None = None,
    ) -> int:
        """Read every message left without readings, at full speed (a one-off run, after its
        passes), or until `stop` is set (its lease lost: nothing more could be recorded),
        between batches; answers how many were read."""
        ports = self._ports_of(account)
        done = after = 0
        while ports.wired and not (stop is not None and stop.is_set()):
            count, after = self._reverification.fill(account.account_id, ports, self._batch, after)
            if count == 0:
                break
            done += count
            if progress is not None:
                progress(done)
        return done

    def run_forever(self, account: AccountConfig, stop: threading.Event) -> None:
        """Keep reading what passes leave, at the duty cycle, until `stop` is set."""
        ports = self._ports_of(account)
        if not ports.wired:
            return
        # Messages are stored in `seq` order, so a walk need not look behind where it is;
        # when it finds nothing it starts over once before it rests.
        after = 0
        while not stop.is_set():
            started = self._clock()
            walked_from = after
            try:
                count, after = self._reverification.fill(
                    account.account_id, ports, self._batch, after
                )
            except Exception as error:
                log.warning(
                    "trust.backfill_failed",
                    error=type(error).__name__,
                    account=account.account_id,
                )
                count = 0
            if count == 0:
                after = 0
                if walked_from == 0:
                    stop.wait(self._idle_seconds)
                continue
            worked = self._clock() - started
            stop.wait(worked * (1.0 - self._duty) / self._duty)
