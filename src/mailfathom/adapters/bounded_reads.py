"""Reading an answer from a server this deployment does not control, up to a size."""

from __future__ import annotations

from collections.abc import Iterable


def bounded(chunks: Iterable[bytes], limit: int) -> bytes | None:
    """The chunks joined, or None as soon as they pass `limit` octets (nothing more is read)."""
    kept: list[bytes] = []
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            return None
        kept.append(chunk)
    return b"".join(kept)
