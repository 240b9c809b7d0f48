"""Signing continuation cursors with a key only this deployment holds (HMAC-SHA256), or
sealing them (AES-256-GCM) where what they carry must not be read either.

The key lives in a file under the data directory, created on first use with mode 0600, so
cursors survive a restart and are refused by any other deployment. A contact cursor carries
the name a page stopped at and travels in links (proxy logs, browser history): it is sealed,
under a key derived from the same file, so it names nobody."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

_TAG_BYTES = 16
_NONCE_BYTES = 12
_SEALING_LABEL = b"mailfathom sealed cursor"


def key_from_file(path: Path) -> bytes:
    """The key kept in `path`, made there on first use."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        key = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_bytes()
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key


def _encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decoded(token: str) -> bytes | None:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    # Only the one encoding `sign` writes: decoding ignores the spare bits of a last
    # character, which would let an altered token pass as the one issued.
    return raw if _encoded(raw) == token else None


class HmacCursorSigner:
    def __init__(self, key: bytes) -> None:
        if len(key) < 32:
            raise ValueError("cursor key too short")
        self._key = key

    @classmethod
    def from_key_file(cls, path: Path) -> HmacCursorSigner:
        return cls(key_from_file(path))

    def _tag(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:_TAG_BYTES]

    def sign(self, payload: bytes) -> str:
        return _encoded(self._tag(payload) + payload)

    def open(self, token: str) -> bytes | None:
        raw = _decoded(token)
        if raw is None:
            return None
        tag, payload = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
        if len(tag) != _TAG_BYTES or not hmac.compare_digest(tag, self._tag(payload)):
            return None
        return payload


class SealedCursorSigner:
    """A `CursorSigner` whose tokens can be neither altered nor read: AES-256-GCM with a
    random nonce, under a key derived (HMAC-SHA256) from the deployment's cursor key."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 32:
            raise ValueError("cursor key too short")
        self._aead = AESGCM(hmac.new(key, _SEALING_LABEL, hashlib.sha256).digest())

    @classmethod
    def from_key_file(cls, path: Path) -> SealedCursorSigner:
        return cls(key_from_file(path))

    def sign(self, payload: bytes) -> str:
        nonce = secrets.token_bytes(_NONCE_BYTES)
        return _encoded(nonce + self._aead.encrypt(nonce, payload, _SEALING_LABEL))

    def open(self, token: str) -> bytes | None:
        raw = _decoded(token)
        if raw is None or len(raw) < _NONCE_BYTES + _TAG_BYTES:
            return None
        try:
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _SEALING_LABEL)
        except InvalidTag:
            return None
