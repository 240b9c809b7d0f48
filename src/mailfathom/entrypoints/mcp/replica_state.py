"""What one replica of the MCP endpoint shares with the others, through the store.

Several `mailfathom serve` processes behind a load balancer that keeps no affinity serve
one endpoint: any request of any client may reach any of them. What a client of the
handshake generation relies on between its requests lives in the store
(`SharedSessions`, `SharedQuestions`):

- the open sessions, with their caller entry, so the bound per caller entry and the idle
  expiry count every replica's sessions, and a session opened on one replica is served by
  the next (`replica_manager`);
- the questions put to a person within a call held open, by the replica that waits, so the
  bound per caller entry counts them all, and an answer reaching another replica is handed
  to the one waiting (`route`, then `deliver_answers` there).

A replica refreshes the last use of the sessions it has a request in flight for (a long
call, an open event stream) every third of the idle period, so a session in use is never
taken as idle by another replica, and the sessions of a replica that died expire as idle.
A question's place is held at most the time a person has to answer it, and a minute more.

Every time a replica writes or compares is read off the one clock the replicas share, the
store's (`SharedClock`), never the machine's own: a replica whose clock ran ahead by more
than the idle period would otherwise take the sessions the others keep in use as idle, and
one behind would keep dead sessions. The clock answers without a round trip; the heartbeat
measures it again against the store, in a worker thread.
"""

from __future__ import annotations

import contextlib
import math
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta

import anyio
import anyio.to_thread
import structlog

from mailfathom.app.shared.replica_ports import (
    SharedClock,
    SharedQuestions,
    SharedSessions,
    StoredSession,
)

log = structlog.get_logger("mailfathom.mcp")

Deliver = Callable[[str, str], Awaitable[None]]
"""Give a client's answer (session id, JSON-RPC body) to this replica's session."""

_ANSWER_POLL_SECONDS = 0.1
_QUESTION_MARGIN_SECONDS = 60.0


class Replicas:
    """This replica's view of the shared state (see the module docstring)."""

    def __init__(
        self,
        sessions: SharedSessions,
        questions: SharedQuestions,
        *,
        idle_seconds: float,
        question_seconds: float,
        clock: SharedClock,
    ) -> None:
        self.replica = uuid.uuid4().hex
        self._sessions = sessions
        self._questions = questions
        self._idle = timedelta(seconds=idle_seconds)
        self._question_life = timedelta(seconds=question_seconds + _QUESTION_MARGIN_SECONDS)
        self._clock = clock
        self._in_flight: Counter[str] = Counter()
        self._asking = 0
        self._asked = anyio.Event()

    @property
    def heartbeat_seconds(self) -> float:
        return max(0.2, min(10.0, self._idle.total_seconds() / 3))

    def now(self) -> datetime:
        """The time on the clock every replica shares."""
        return self._clock()

    def _live_since(self) -> datetime:
        return self._clock() - self._idle

    async def reserve(self, caller: str, most: int) -> str | None:
        """A place for a session `caller` opens, or None when it holds `most` already."""
        reservation = uuid.uuid4().hex
        now = self._clock()
        taken = await anyio.to_thread.run_sync(
            self._sessions.reserve, reservation, caller, now, now - self._idle, most
        )
        return reservation if taken else None

    async def describe(
        self,
        reservation: str,
        session_id: str,
        principal: str | None,
        protocol_version: str,
        client_params: str,
    ) -> None:
        await anyio.to_thread.run_sync(
            self._sessions.describe,
            reservation,
            session_id,
            principal,
            protocol_version,
            client_params,
            self._clock(),
        )

    async def release(self, reservation: str) -> None:
        await anyio.to_thread.run_sync(self._sessions.release, reservation)

    async def find(self, session_id: str) -> StoredSession | None:
        return await anyio.to_thread.run_sync(self._sessions.find, session_id, self._live_since())

    async def enter(self, session_id: str) -> None:
        self._in_flight[session_id] += 1

    async def leave(self, session_id: str, *, closed: bool) -> None:
        self._in_flight[session_id] -= 1
        if self._in_flight[session_id] <= 0:
            del self._in_flight[session_id]
        if closed:
            await anyio.to_thread.run_sync(self._sessions.close, session_id)
        else:
            await anyio.to_thread.run_sync(self._sessions.touch, [session_id], self._clock())

    async def retry_after(self, caller: str) -> int:
        """Seconds until the least recently used of `caller`'s sessions expires."""
        live_since = self._live_since()
        first = await anyio.to_thread.run_sync(self._sessions.first_used, caller, live_since)
        if first is None:
            return 1
        return max(1, math.ceil((first - live_since).total_seconds()))

    @contextlib.asynccontextmanager
    async def question_held(
        self, caller: str, session_id: str | None, most: int
    ) -> AsyncIterator[bool]:
        """Hold a place for one more question of `caller`, waited on by this replica in
        `session_id`; the block is given False, and holds nothing, at the bound."""
        question_id = uuid.uuid4().hex
        now = self._clock()
        placed = await anyio.to_thread.run_sync(
            self._questions.hold,
            question_id,
            caller,
            session_id or "",
            self.replica,
            now,
            now - self._question_life,
            most,
        )
        if not placed:
            yield False
            return
        self._asking += 1
        self._asked.set()
        try:
            yield True
        finally:
            self._asking -= 1
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._questions.release, question_id)

    async def questions_waiting(self, caller: str) -> int:
        return await anyio.to_thread.run_sync(
            self._questions.waiting, caller, self._clock() - self._question_life
        )

    async def route(self, session_id: str, body: str) -> bool:
        """Hand a client's answer to the replicas waiting on a question in `session_id`;
        False when none is, and the answer is this replica's to take as today."""
        now = self._clock()
        routed = await anyio.to_thread.run_sync(
            self._questions.route, session_id, body, now, now - self._question_life
        )
        return routed > 0

    async def keep_alive(self) -> None:
        """Refresh the last use of every session with a request in flight here, and this
        replica's reading of the shared clock."""
        while True:
            await anyio.sleep(self.heartbeat_seconds)
            try:
                await anyio.to_thread.run_sync(self._clock.measure)
            except Exception as error:
                log.warning("mcp.replica_clock_unread", error_type=type(error).__name__)
            busy = list(self._in_flight)
            if busy:
                try:
                    await anyio.to_thread.run_sync(self._sessions.touch, busy, self._clock())
                except Exception as error:
                    log.warning("mcp.replica_heartbeat_failed", error_type=type(error).__name__)

    async def deliver_answers(self, deliver: Deliver) -> None:
        """While this replica waits on a question, take the answers other replicas were
        handed for it and give each to its session here."""
        while True:
            if self._asking == 0:
                self._asked = anyio.Event()
                await self._asked.wait()
            await anyio.sleep(_ANSWER_POLL_SECONDS)
            try:
                answers = await anyio.to_thread.run_sync(self._questions.collect, self.replica)
            except Exception as error:
                log.warning("mcp.replica_answers_unread", error_type=type(error).__name__)
                continue
            for session_id, body in answers:
                await deliver(session_id, body)
