"""Placing a query in the space stored mail is embedded in, and what that says about search.

One instance per process, shared by every search, every listing of the tools and the
embedding worker, so that each of them reads the freshest evidence about the provider:

- no active profile: `inactive`, and nothing is ever asked of a provider;
- the provider failed (a refused credential, no answer, another model, a malformed answer):
  `degraded`, and it is not asked again by a search for `recheck_seconds`; after that one
  search (never several at once) asks it, and the first call that succeeds, a search's or
  the worker's, makes the state `available` again without a restart;
- the active generation is not yet filled (a new or changed profile whose backfill has not
  reached the end): `degraded` too, though a query is placed and compared with the mail the
  generation already holds;
- otherwise `available`.

`serve` also re-checks a failed provider in the background once its window has passed
(`recheck`), so the state recovers while nobody searches.

The provider's adapter logs each failure by its code; nothing here repeats it. The embedding
worker's calls keep the same window: within it, they fail at once without asking.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import structlog

from mailfathom.app.shared.embedding_ports import Embedder, EmbeddingUnavailable
from mailfathom.app.shared.vector_ports import FillStates
from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity, SemanticState
from mailfathom.domain.embedding_profiles import DEFAULT_RECHECK_SECONDS

_T = TypeVar("_T")
log = structlog.get_logger("mailfathom.embedding")


@dataclass(frozen=True, slots=True)
class Placement:
    """A query's vector in `generation` (None: the query is ranked lexically only), and the
    state the search publishes beside its results."""

    vector: tuple[float, ...] | None
    generation: str | None
    state: SemanticState
    # The least similarity (cosine) a message needs to be brought by the vector ranking
    # alone: below it, nothing in it is near enough to the query to count as a match.
    floor: float = 0.0


_LEXICAL_INACTIVE = Placement(None, None, SemanticState.INACTIVE)

# What a background re-check embeds: a constant, so that nothing of any mailbox or query
# leaves for the provider outside a search or the embedding of stored mail.
RECHECK_TEXT = "mailfathom provider check"


class ProviderStanding:
    """When the provider last failed, and whether a search is asking it again now.
    Thread-safe."""

    def __init__(self, recheck_seconds: float, clock: Callable[[], float]) -> None:
        self._recheck = recheck_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failed_at: float | None = None
        self._failure = EmbeddingFailure.UNREACHABLE
        self._probing = False

    def failed(self, failure: EmbeddingFailure) -> None:
        with self._lock:
            self._failed_at = self._clock()
            self._failure = failure
            self._probing = False

    def last_failure(self) -> EmbeddingFailure:
        with self._lock:
            return self._failure

    def answered(self) -> None:
        with self._lock:
            self._failed_at = None
            self._probing = False

    def failing(self) -> bool:
        with self._lock:
            return self._failed_at is not None

    def claim(self) -> bool:
        """Whether this caller may ask the provider now: it is not known to fail, or it failed
        at least `recheck_seconds` ago and no other caller is asking it again."""
        with self._lock:
            if self._failed_at is None:
                return True
            if self._probing or self._clock() - self._failed_at < self._recheck:
                return False
            self._probing = True
            return True

    def release(self) -> None:
        """A claim ended without an answer either way (the caller was interrupted)."""
        with self._lock:
            self._probing = False


class QueryPlacement:
    """`state()` for listings and ask_mail's availability; `place()` for each search."""

    def __init__(
        self,
        embedder: Embedder | None,
        fills: FillStates | None,
        *,
        recheck_seconds: float = DEFAULT_RECHECK_SECONDS,
        min_similarity: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._embedder = None if embedder is None else _Reporting(embedder, self)
        self._fills = fills
        self._floor = min_similarity
        self.standing = ProviderStanding(recheck_seconds, clock)

    @property
    def embedder(self) -> Embedder | None:
        """The active profile's embedder, reporting each outcome here: what the embedding
        worker is given, so that its failures and recoveries are the search's too."""
        return self._embedder

    @property
    def placing(self) -> bool:
        """Whether a query may be placed at all: some profile is active."""
        return self._embedder is not None

    def state(self) -> SemanticState:
        embedder = self._embedder
        if embedder is None:
            return SemanticState.INACTIVE
        if self.standing.failing() or not self._filled(embedder.identity):
            return SemanticState.DEGRADED
        return SemanticState.AVAILABLE

    def place(self, query_text: str) -> Placement:
        embedder = self._embedder
        if embedder is None:
            return _LEXICAL_INACTIVE
        if not self.standing.claim():
            return Placement(None, None, SemanticState.DEGRADED)
        try:
            vector = embedder.embed_query(query_text)
        except EmbeddingUnavailable:
            return Placement(None, None, SemanticState.DEGRADED)
        except BaseException:
            self.standing.release()
            raise
        identity = embedder.identity
        filled = self._filled(identity)
        state = SemanticState.AVAILABLE if filled else SemanticState.DEGRADED
        return Placement(tuple(vector), identity.generation, state, self._floor)

    def recheck(self) -> bool:
        """Ask a failed provider again once its window has passed and no search is asking it,
        with a fixed text that is no mail's (`RECHECK_TEXT`), so that `state()` recovers even
        while nobody searches (ask_mail is listed by it). Answers whether it asked."""
        embedder = self._embedder
        if embedder is None or not self.standing.failing() or not self.standing.claim():
            return False
        try:
            embedder.embed_query(RECHECK_TEXT)
        except EmbeddingUnavailable:
            pass
        except BaseException:
            self.standing.release()
            raise
        return True

    def _filled(self, identity: ProfileIdentity) -> bool:
        return self._fills is not None and self._fills.is_filled(identity.generation)


class _Reporting:
    """The embedder, telling the placement's standing how each call went."""

    def __init__(self, embedder: Embedder, placement: QueryPlacement) -> None:
        self._embedder = embedder
        self._placement = placement

    @property
    def identity(self) -> ProfileIdentity:
        return self._embedder.identity

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Stored mail's passages (the embedding worker): a provider that failed is not
        asked before its window has passed, as for searches."""
        standing = self._placement.standing
        if not standing.claim():
            raise EmbeddingUnavailable(standing.last_failure())
        return self._reported(lambda: self._embedder.embed_passages(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._reported(lambda: self._embedder.embed_query(text))

    def _reported(self, call: Callable[[], _T]) -> _T:
        standing = self._placement.standing
        try:
            answer = call()
        except EmbeddingUnavailable as error:
            standing.failed(error.failure)
            raise
        except Exception as error:
            # A provider's adapter translates every failure it knows; anything else it let
            # through is still the provider failing, not the search.
            log.warning("embedding.provider_error", error=type(error).__name__)
            standing.failed(EmbeddingFailure.MALFORMED)
            raise EmbeddingUnavailable(EmbeddingFailure.MALFORMED) from None
        except BaseException:
            standing.release()
            raise
        standing.answered()
        return answer
