"""`/livez` and `/readyz`: what a supervisor and a load balancer ask of a long-running process.

`/livez` answers 200 as long as the process can answer at all: it asks nothing of the store,
so a database outage never gets a healthy process restarted. `/readyz` answers 200 once every
readiness check holds, and 503 otherwise with the names of the checks that did not (fixed
words of this project, never an error's text, a path or an address). Neither needs a key:
both say only what a load balancer or a supervisor must learn before it sends work, they
carry nothing of any caller's or any mailbox's, and an orchestrator's probe seldom carries a
credential. What keeps an unauthenticated probe from loading the store is that checks run one
round at a time and a round's answer is reused for `FRESH_SECONDS`. Both keep the Host and
Origin rule of the listener they are served on (DNS-rebinding protection on loopback).

Each check runs in a thread of its own and is given `BOUND_SECONDS`; one that has not
answered by then counts as failing, and is not started again while it still runs, so a
store that hangs holds one thread, not one per probe.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping

import anyio.to_thread
import structlog
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

log = structlog.get_logger("mailfathom.operations")

BOUND_SECONDS = 2.0
FRESH_SECONDS = 1.0
LIVEZ_PATH = "/livez"
READYZ_PATH = "/readyz"

ReadinessChecks = Mapping[str, Callable[[], bool]]
"""Named blocking checks; False, or any error, means not ready."""


class Readiness:
    """The failing checks of `checks`, asked at most once per `fresh` seconds."""

    def __init__(
        self,
        checks: ReadinessChecks,
        *,
        bound: float = BOUND_SECONDS,
        fresh: float = FRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._checks = dict(checks)
        self._bound = bound
        self._fresh = fresh
        self._clock = clock
        self._round = threading.Lock()
        self._running: dict[str, threading.Thread] = {}
        self._answers: dict[str, bool] = {}
        self._last: tuple[float, list[str]] | None = None
        self._said: list[str] = []

    def failing(self) -> list[str]:
        """The names of the checks that do not hold now, in the order given (blocking, at
        most about `bound` seconds after any round already running)."""
        with self._round:
            now = self._clock()
            if self._last is not None and now - self._last[0] < self._fresh:
                return list(self._last[1])
            failing = self._ask()
            self._last = (self._clock(), failing)
            if failing != self._said:
                self._said = failing
                if failing:
                    log.warning("operations.not_ready", failing=failing)
                else:
                    log.info("operations.ready")
            return list(failing)

    def _ask(self) -> list[str]:
        deadline = time.monotonic() + self._bound
        started: list[str] = []
        for name, check in self._checks.items():
            running = self._running.get(name)
            if running is not None and running.is_alive():
                continue
            self._answers.pop(name, None)
            thread = threading.Thread(
                target=self._answer, args=(name, check), daemon=True, name=f"readiness-{name}"
            )
            self._running[name] = thread
            thread.start()
            started.append(name)
        for name in started:
            self._running[name].join(max(0.0, deadline - time.monotonic()))
        return [name for name in self._checks if not self._answers.get(name, False)]

    def _answer(self, name: str, check: Callable[[], bool]) -> None:
        try:
            held = bool(check())
        except Exception as error:
            log.debug("operations.check_failed", check=name, error_type=type(error).__name__)
            held = False
        self._answers[name] = held


def _json(document: object, status: int = 200) -> Response:
    return Response(
        json.dumps(document).encode(),
        status_code=status,
        media_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def health_routes(
    readiness: Readiness, security: TransportSecuritySettings | None
) -> list[BaseRoute]:
    """`/livez` and `/readyz`, held to the listener's Host and Origin rule `security`."""
    guard = TransportSecurityMiddleware(security)

    async def livez(request: Request) -> Response:
        refused = await guard.validate_request(request)
        return refused if refused is not None else _json({"status": "alive"})

    async def readyz(request: Request) -> Response:
        refused = await guard.validate_request(request)
        if refused is not None:
            return refused
        failing = await anyio.to_thread.run_sync(readiness.failing)
        if failing:
            return _json({"status": "not ready", "failing": failing}, 503)
        return _json({"status": "ready"})

    return [
        Route(LIVEZ_PATH, livez, methods=["GET"]),
        Route(READYZ_PATH, readyz, methods=["GET"]),
    ]
