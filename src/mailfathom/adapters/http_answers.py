"""Reading an HTTP answer within a bound, and taking it as a JSON object or as nothing.

Shared by the adapters that speak JSON over HTTP to a server they do not control (a token
endpoint, an embeddings endpoint): an answer larger than any valid one is not read further,
and one that is not a JSON object is not one, whatever it holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Protocol


class ByteStream(Protocol):
    """An answer being received (`httpx2.Response` of a streamed request)."""

    def iter_bytes(self) -> Iterator[bytes]: ...


def bounded_body(response: ByteStream, limit: int) -> bytes | None:
    """The whole body, or None once it runs past `limit` octets."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def json_object(raw: bytes | None) -> dict[str, object] | None:
    """`raw` as a JSON object; None for no body, a body that is not JSON, or other JSON."""
    if raw is None:
        return None
    try:
        document = json.loads(raw)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
