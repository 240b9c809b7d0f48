"""Finding mail by meaning, as values: which embedding space a vector lives in, what the
server can do with embeddings right now, and how one search was ranked.

A vector means something only inside the space of the model that made it. The identity of
the active profile (model, version, dimension) is recorded with every stored vector, so a
changed profile starts a new generation that is never compared with the old one, and a
search embeds its query only with the profile whose vectors it ranks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from mailfathom.domain.codes import EmbeddingCode


@dataclass(frozen=True, slots=True)
class ProfileIdentity:
    """The embedding space of a profile. `version` names the exact weights (a package's
    version and the checksum of its weights, or what an endpoint's operator declared), so two
    profiles with one model name but other weights are two spaces."""

    model: str
    version: str
    dimension: int

    @property
    def generation(self) -> str:
        """The key stored vectors carry: equal exactly when the spaces are the same."""
        return f"{self.model}@{self.version}/{self.dimension}"


class SemanticState(enum.Enum):
    """What this server can do with embeddings, as `search_emails` publishes it.

    `INACTIVE`: no profile is active, lexical is the intended and only mode. `AVAILABLE`: mail
    is embedded and the provider answers. `DEGRADED`: a profile is active but a query cannot be
    placed in its space now (a refused credential, an unreachable endpoint, a model other than
    the one the profile records, or vectors not yet filled for the active generation)."""

    INACTIVE = "inactive"
    AVAILABLE = "available"
    DEGRADED = "degraded"


class RetrievalMode(enum.Enum):
    """How one search's results were ranked: by the words alone, or by the words fused with
    embedding similarity."""

    LEXICAL = "lexical"
    HYBRID = "hybrid"


class EmbeddingFailure(enum.Enum):
    """Why a provider could not embed: each is recorded for the operator under its own code."""

    REFUSED = "refused"  # the credential was refused (401/403)
    UNREACHABLE = "unreachable"  # no answer in time, connection refused, 5xx
    MISMATCH = "mismatch"  # the answer is not of the profile's model or dimension
    MALFORMED = "malformed"  # an answer that is not a valid embeddings response

    @property
    def code(self) -> EmbeddingCode:
        """The code the operator's log and health record show this failure under."""
        return _FAILURE_CODES[self]


_FAILURE_CODES = {
    EmbeddingFailure.REFUSED: EmbeddingCode.PROVIDER_REFUSED,
    EmbeddingFailure.UNREACHABLE: EmbeddingCode.PROVIDER_UNREACHABLE,
    EmbeddingFailure.MISMATCH: EmbeddingCode.PROVIDER_MISMATCH,
    EmbeddingFailure.MALFORMED: EmbeddingCode.PROVIDER_MALFORMED,
}


def failure_code(failure: EmbeddingFailure) -> int:
    """The operator's code of a provider failure (`codes.EmbeddingCode`)."""
    return failure.code.value
