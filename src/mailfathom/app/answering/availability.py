"""Whether this deployment can answer a question now, decided per listing and per call.

Two conditions, configured separately: an embedding profile is active and a query can be
placed in its space (search_emails' `semanticSearch` is `available`), and a chat endpoint is
declared and did not refuse within the last recheck window. Nothing but a question reaches
the chat endpoint, so a refusal is not kept for longer than that window: after it the tool is
offered again and the next question finds out whether the endpoint was repaired.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mailfathom.app.answering.ports import SemanticSearch
from mailfathom.domain.codes import Code
from mailfathom.domain.embedding import SemanticState
from mailfathom.domain.errors import Refusal

NO_ENDPOINT = "This deployment answers no questions about mail: it declares no chat endpoint."
NO_EMBEDDINGS = "This deployment answers no questions about mail: it embeds no mail."
EMBEDDINGS_DEGRADED = (
    "This deployment answers questions about mail but cannot now: it cannot place a "
    "question in the space its mail is embedded in. Its operator is the one to act."
)
ENDPOINT_REFUSING = (
    "This deployment answers questions about mail but cannot now: its chat endpoint is "
    "refusing. Asking again after a minute can succeed."
)


class ChatRefusals:
    """When the chat endpoint last refused, in this process, and for how long that withholds
    answering. Thread-safe: questions run on worker threads beside the listing."""

    def __init__(self, recheck_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._recheck = recheck_seconds
        self._clock = clock
        self._refused_at: float | None = None
        self._lock = threading.Lock()

    def refused(self) -> None:
        with self._lock:
            self._refused_at = self._clock()

    def answered(self) -> None:
        with self._lock:
            self._refused_at = None

    def refusing(self) -> bool:
        with self._lock:
            at = self._refused_at
            if at is None:
                return False
            if self._clock() - at >= self._recheck:
                self._refused_at = None
                return False
            return True


class Availability:
    """Reads both conditions; `unavailable()` says which one fails, in the words of 56001."""

    def __init__(self, declared: bool, semantic: SemanticSearch, refusals: ChatRefusals) -> None:
        self._declared = declared
        self._semantic = semantic
        self.refusals = refusals

    def unavailable(self) -> str | None:
        if not self._declared:
            return NO_ENDPOINT
        state = self._semantic.state()
        if state is SemanticState.INACTIVE:
            return NO_EMBEDDINGS
        if state is SemanticState.DEGRADED:
            return EMBEDDINGS_DEGRADED
        if self.refusals.refusing():
            return ENDPOINT_REFUSING
        return None

    def available(self) -> bool:
        return self.unavailable() is None

    def capable(self) -> bool:
        """Whether this deployment answers questions at all, as configured: an endpoint is
        declared and mail is embedded (degraded or refusing is a passing state of one that
        does)."""
        return self._declared and self._semantic.state() is not SemanticState.INACTIVE

    def require(self) -> None:
        reason = self.unavailable()
        if reason is not None:
            raise Refusal(Code.ANSWERING_UNAVAILABLE, reason)
