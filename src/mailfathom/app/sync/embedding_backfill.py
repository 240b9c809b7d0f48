"""The embedding backfill: one thread per deployment placing stored mail, and then each new
message, in the active profile's space, at its own pace.

It walks each account's messages from the account's position in its generation, the
accounts taking turns a batch of passages at a time (`Walk`), and after a batch that took `t`
seconds waits long enough for its own work to stay near `duty` of one processor, so a
synchronization pass running meanwhile keeps the rest (and its own thread: a pass never waits
for an embedding). Once nothing is left past any position it walks from the start now and
then (`sweep_seconds`), for mail whose content arrived after the walk passed it; a walk from
the start that finds nothing left notes the generation filled. Then it rests `idle_seconds`,
reads the positions again (an account added meanwhile joins the walk) and looks again: mail a
pass stored meanwhile lies past its account's position.

A provider that fails pauses it: it waits `first_pause` seconds, twice as long after each
further failure up to `longest_pause`, and starts again where it was, since nothing of the
failed batch was recorded. Its failures are logged by kind (`EmbeddingFailure`), never with
any text sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import structlog

from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.app.sync.embedding import StoredMailEmbedding, Walk
from mailfathom.app.sync.embedding_ports import Generation
from mailfathom.app.sync.pass_activity import PassActivity
from mailfathom.app.sync.work_meter import Unmetered, WorkMeter
from mailfathom.domain.embedding import failure_code

log = structlog.get_logger("mailfathom.embedding")

EMBEDDING_DUTY = 0.25
IDLE_SECONDS = 5.0
SWEEP_SECONDS = 300.0
FIRST_PAUSE = 5.0
LONGEST_PAUSE = 300.0


class EmbeddingBackfill:
    def __init__(
        self,
        embedding: StoredMailEmbedding,
        *,
        duty: float = EMBEDDING_DUTY,
        idle_seconds: float = IDLE_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        first_pause: float = FIRST_PAUSE,
        longest_pause: float = LONGEST_PAUSE,
        clock: Callable[[], float] = time.monotonic,
        activity: PassActivity | None = None,
        meter: WorkMeter | None = None,
    ) -> None:
        self._embedding = embedding
        self._meter = meter if meter is not None else Unmetered()
        # Synchronization passes of this process: no batch starts while one runs.
        self._activity = activity if activity is not None else PassActivity()
        self._duty = duty
        self._idle = idle_seconds
        self._sweep = sweep_seconds
        self._first_pause = first_pause
        self._longest_pause = longest_pause
        self._clock = clock

    def run_forever(self, stop: threading.Event) -> None:
        """Keep the active generation filled until `stop` is set."""
        generation: Generation | None = None
        walk: Walk | None = None
        from_start = False
        swept_at: float | None = None
        pause = self._first_pause
        while not stop.is_set():
            self._activity.wait_idle(stop)
            if stop.is_set():
                return
            started = self._clock()
            try:
                if generation is None:
                    generation = self._embedding.generation()
                if walk is None:
                    positions = generation.positions
                    walk = Walk(dict.fromkeys(positions, 0) if from_start else positions)
                turn = walk.turn()
                if turn is not None:
                    step = self._embedding.step(generation, *turn)
                    self._meter.passages_embedded(step.passages)
                elif from_start:
                    self._finished(generation)
            except EmbeddingUnavailable as failure:
                log.warning(
                    "embedding.provider_failed",
                    code=failure_code(failure.failure),
                    failure=failure.failure.value,
                    pause=pause,
                )
                stop.wait(pause)
                pause = min(pause * 2, self._longest_pause)
                continue
            except Exception as error:
                log.warning("embedding.backfill_failed", error=type(error).__name__, pause=pause)
                stop.wait(pause)
                pause = min(pause * 2, self._longest_pause)
                continue
            pause = self._first_pause
            if turn is not None:
                account_id, after = turn
                walk.went(account_id, step.after_seq)
                if step.after_seq != after:
                    worked = self._clock() - started
                    stop.wait(worked * (1.0 - self._duty) / self._duty)
                continue
            # Nothing left past any position: the next walk reads them again.
            walk = None
            now = self._clock()
            if not from_start and (swept_at is None or now - swept_at >= self._sweep):
                from_start, swept_at = True, now
                continue
            from_start = False
            generation = None  # read again: the positions, and whether it is filled
            stop.wait(self._idle)

    def _finished(self, generation: Generation) -> None:
        if generation.filled:
            return
        dropped = self._embedding.finish(generation)
        state = self._embedding.fill_state()
        log.info(
            "embedding.generation_filled",
            generation=generation.identity.generation,
            messages=state.embedded,
            older_generations_dropped=dropped,
        )
