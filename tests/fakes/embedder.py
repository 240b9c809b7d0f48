"""A deterministic in-process `Embedder`: each word hashed to a component, the counts
normalized, so texts sharing words are near and the same text always lands in one place.

It can be told to fail (`fail_next`, `fail_always`) as a provider does, and it keeps the
batches it was asked to embed, under a lock, since a backfill thread and a test read it at
once."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity

_WORD = re.compile(r"\w+")


def hashed_words(text: str, dimension: int) -> list[float]:
    counts = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        counts[int.from_bytes(digest, "big") % dimension] += 1.0
    norm = math.sqrt(sum(c * c for c in counts))
    if norm == 0.0:
        counts[0] = norm = 1.0
    return [c / norm for c in counts]


@dataclass
class FakeEmbedder:
    model: str = "hashed-words"
    version: str = "1"
    dimension: int = 64
    batches: list[list[str]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    failed: int = 0
    _failures: list[EmbeddingFailure] = field(default_factory=list)
    _always: EmbeddingFailure | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def identity(self) -> ProfileIdentity:
        return ProfileIdentity(self.model, self.version, self.dimension)

    def fail_next(self, *failures: EmbeddingFailure) -> None:
        with self._lock:
            self._failures.extend(failures)

    def fail_always(self, failure: EmbeddingFailure | None) -> None:
        """Fail every call with `failure` until told None."""
        with self._lock:
            self._always = failure

    def _check(self) -> None:
        with self._lock:
            failure = self._failures.pop(0) if self._failures else self._always
            if failure is not None:
                self.failed += 1
        if failure is not None:
            raise EmbeddingUnavailable(failure)

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        self._check()
        with self._lock:
            self.batches.append(list(texts))
        return [hashed_words(t, self.dimension) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self._check()
        with self._lock:
            self.queries.append(text)
        return hashed_words(text, self.dimension)

    def close(self) -> None:
        """Nothing to release (`OpenEmbedder`)."""

    def failures(self) -> int:
        with self._lock:
            return self.failed

    def passages_embedded(self) -> int:
        with self._lock:
            return sum(len(b) for b in self.batches)
