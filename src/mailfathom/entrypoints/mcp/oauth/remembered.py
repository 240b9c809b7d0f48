"""What an issuer said about a token, kept briefly by the token's SHA-256 (never the token
itself), at most a bounded number of tokens: the one kept longest goes first."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Generic, TypeVar

T = TypeVar("T")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Remembered(Generic[T]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[str, tuple[float, T]] = OrderedDict()

    def get(self, digest: str, now: float) -> T | None:
        kept = self._kept.get(digest)
        if kept is None:
            return None
        if now >= kept[0]:
            del self._kept[digest]
            return None
        return kept[1]

    def keep(self, digest: str, value: T, until: float) -> None:
        self._kept.pop(digest, None)
        self._kept[digest] = (until, value)
        while len(self._kept) > self._size:
            self._kept.popitem(last=False)
