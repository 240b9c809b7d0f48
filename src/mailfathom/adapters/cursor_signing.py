"""Signing continuation cursors with a key only this deployment holds (HMAC-SHA256).

The key lives in a file under the data directory, created on first use with mode 0600, so
cursors survive a restart and are refused by any other deployment."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from pathlib import Path

_TAG_BYTES = 16


class HmacCursorSigner:
    def __init__(self, key: bytes) -> None:
        if len(key) < 32:
            raise ValueError("cursor key too short")
        self._key = key

    @classmethod
    def from_key_file(cls, path: Path) -> HmacCursorSigner:
        try:
            return cls(path.read_bytes())
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            key = secrets.token_bytes(32)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return cls(path.read_bytes())
            with os.fdopen(fd, "wb") as handle:
                handle.write(key)
            return cls(key)

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_TAG_BYTES]

    def sign(self, payload: bytes) -> str:
        return base64.urlsafe_b64encode(self._tag(payload) + payload).decode().rstrip("=")

    def open(self, token: str) -> bytes | None:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            return None
        # Only the one encoding `sign` writes: decoding ignores the spare bits of a last
        # character, which would let an altered token pass as the one issued.
        if base64.urlsafe_b64encode(raw).decode().rstrip("=") != token:
            return None
        tag, payload = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        if len(tag) != _TAG_BYTES or not hmac.compare_digest(tag, self._tag(payload)):
            return None
        return payload
