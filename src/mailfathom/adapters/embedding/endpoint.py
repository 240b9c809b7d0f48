"""An OpenAI-compatible `/v1/embeddings` endpoint behind the `Embedder` port.

OpenAI's API, Ollama, llama.cpp's server and vLLM all answer `POST <base>/embeddings` with
`{"data": [{"index": i, "embedding": [...]}], "model": ...}`. The request is made with the
project's own HTTP client (`httpx2`) rather than the `openai` package: a failure has to be
told apart by its kind (refused, unreachable, another model, a broken answer) at this edge,
the client must not retry on its own (a failing provider is set aside for a minute by the
caller, not hammered), and the answer is read within a bound before it is parsed.

How an answer maps to a failure:
- 401, 403: `REFUSED` (the credential);
- no connection, no answer within the timeouts, 408, 429, any 5xx: `UNREACHABLE`;
- 404 (the endpoint serves no such model), an answer naming another model, or vectors of
  another dimension: `MISMATCH`;
- anything else (another status, a body that is not JSON or not an embeddings answer, a
  vector missing or not made of finite numbers, or all zeros): `MALFORMED`.

Nothing sent or received is logged or put in an error: the texts are mail, the key is a
secret, and an answer may repeat either. A failure is logged with its code, the profile's
name and the HTTP status.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NoReturn

import httpx2
import structlog

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.http_answers import bounded_body, json_object
from mailfathom.app.shared.embedding_ports import EmbeddingUnavailable
from mailfathom.domain.embedding import EmbeddingFailure, ProfileIdentity
from mailfathom.domain.embedding_profiles import EndpointProfile
from mailfathom.domain.errors import SecretUnavailable

log = structlog.get_logger("mailfathom.embedding")

# Far above what any batch of vectors takes as JSON (2,048 x 4,096 floats is about 200 MB
# only for absurd settings); an answer beyond it is not read further.
MAX_ANSWER_OCTETS = 256 * 1024 * 1024
_UNREACHABLE_STATUSES = frozenset({408, 429})


class EndpointEmbedder:
    """Embeds through one endpoint; one instance serves every thread (the connection pool is
    thread-safe). The key is read from its reference for every request, so a rotated key is
    used without a restart."""

    def __init__(
        self,
        profile: EndpointProfile,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._profile = profile
        self._environ = environ
        self._identity = ProfileIdentity(profile.model, profile.version, profile.dimension)
        self._client = httpx2.Client(
            timeout=httpx2.Timeout(
                profile.timeout_seconds, connect=profile.connect_timeout_seconds
            ),
            follow_redirects=False,
        )

    @property
    def identity(self) -> ProfileIdentity:
        return self._identity

    def close(self) -> None:
        self._client.close()

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        found: list[list[float]] = []
        size = self._profile.batch_size
        for start in range(0, len(texts), size):
            found.extend(self._request(list(texts[start : start + size])))
        return found

    def embed_query(self, text: str) -> list[float]:
        """A search's query: waited on for `query_timeout_seconds` at most."""
        profile = self._profile
        wait = profile.query_timeout_seconds
        timeout = httpx2.Timeout(wait, connect=min(wait, profile.connect_timeout_seconds))
        return self._request([text], timeout)[0]

    def _request(
        self, texts: list[str], timeout: httpx2.Timeout | None = None
    ) -> list[list[float]]:
        headers = {"Accept": "application/json"}
        key = self._key()
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        body = {"model": self._profile.model, "input": texts, "encoding_format": "float"}
        try:
            with self._client.stream(
                "POST",
                f"{self._profile.url}/embeddings",
                json=body,
                headers=headers,
                timeout=timeout if timeout is not None else httpx2.USE_CLIENT_DEFAULT,
            ) as response:
                status = response.status_code
                raw = bounded_body(response, MAX_ANSWER_OCTETS) if status == 200 else None
        except httpx2.HTTPError as error:
            self._fail(EmbeddingFailure.UNREACHABLE, None, type(error).__name__)
        if status != 200:
            self._fail(_failure_of(status), status, "status")
        return self._vectors(raw, len(texts))

    def _key(self) -> str | None:
        if self._profile.api_key is None:
            return None
        try:
            return read_secret(self._profile.api_key, self._environ)
        except SecretUnavailable:
            # Nothing can be presented: the endpoint would refuse, and says so the same way.
            self._fail(EmbeddingFailure.REFUSED, None, "key_unreadable")

    def _vectors(self, raw: bytes | None, count: int) -> list[list[float]]:
        def malformed(why: str) -> NoReturn:
            self._fail(EmbeddingFailure.MALFORMED, 200, why)

        document = json_object(raw)
        if document is None:
            malformed("not_json")
        model = document.get("model")
        if model is not None and model != self._profile.model:
            self._fail(EmbeddingFailure.MISMATCH, 200, "model")
        data = document.get("data")
        if not isinstance(data, list) or len(data) != count:
            malformed("count")
        ordered = _in_order(data, count)
        if ordered is None:
            malformed("index")
        vectors: list[list[float]] = []
        for item in ordered:
            vector = item.get("embedding")
            if not isinstance(vector, list) or not all(_is_number(v) for v in vector):
                malformed("embedding")
            if len(vector) != self._profile.dimension:
                self._fail(EmbeddingFailure.MISMATCH, 200, "dimension")
            values = _floats(vector)
            if values is None:
                malformed("embedding")
            norm = math.sqrt(math.fsum(v * v for v in values))
            if not math.isfinite(norm) or norm == 0.0:
                malformed("norm")
            vectors.append([v / norm for v in values])
        return vectors

    def _fail(self, failure: EmbeddingFailure, status: int | None, reason: str) -> NoReturn:
        log.warning(
            "embedding.unavailable",
            code=int(failure.code),
            failure=failure.value,
            reason=reason,
            status=status,
            profile=self._profile.name,
        )
        raise EmbeddingUnavailable(failure)


def _failure_of(status: int) -> EmbeddingFailure:
    if status in (401, 403):
        return EmbeddingFailure.REFUSED
    if status >= 500 or status in _UNREACHABLE_STATUSES:
        return EmbeddingFailure.UNREACHABLE
    if status == 404:
        return EmbeddingFailure.MISMATCH
    return EmbeddingFailure.MALFORMED


def _in_order(data: list[object], count: int) -> list[dict[str, object]] | None:
    """The items by their `index` (a permutation of 0..count-1), or as listed when none
    carries one; None for anything else."""
    if not all(isinstance(item, dict) for item in data):
        return None
    items: list[dict[str, object]] = [item for item in data if isinstance(item, dict)]
    if all("index" not in item for item in items):
        return items
    by_index: dict[int, dict[str, object]] = {}
    for item in items:
        index = item.get("index")
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count:
            by_index[index] = item
    if len(by_index) != count:
        return None
    return [by_index[index] for index in range(count)]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _floats(vector: list[object]) -> list[float] | None:
    """The components as finite floats; None when one is not (an integer too large for a
    float, an infinity, not a number)."""
    values: list[float] = []
    for value in vector:
        try:
            number = float(value)  # type: ignore[arg-type]
        except (OverflowError, TypeError, ValueError):
            return None
        if not math.isfinite(number):
            return None
        values.append(number)
    return values
