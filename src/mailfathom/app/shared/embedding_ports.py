"""The embedding provider, as every slice that places text in a vector space sees it.

Synchronization embeds the passages of new mail, the search path embeds a query, and the
answering run embeds the lookups its model asks for; all three reach the provider through this
one port, so the health of the provider is read the same way wherever it is met.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity


class EmbeddingUnavailable(Exception):
    """The provider could not embed now. Carries why (`failure`), never the text sent or any
    part of the provider's answer."""

    def __init__(self, failure: EmbeddingFailure) -> None:
        super().__init__(f"the embedding provider could not embed ({failure.value})")
        self.failure = failure


class Embedder(Protocol):
    """One active embedding profile.

    Both calls are synchronous and thread-safe, return one unit-length vector of
    `identity.dimension` floats per text, in order, and raise `EmbeddingUnavailable` when the
    provider refuses, cannot be reached in time, or answers outside the profile's space.
    Neither call is idempotent in cost, and neither writes anything.
    """

    @property
    def identity(self) -> ProfileIdentity: ...

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...
