"""Sealing a download grant into a link, and opening a presented link again (AES-256-GCM).

A link is `<public base><DOWNLOAD_PATH><key id>.<sealed grant>`. The grant (account, stored
email, part, expiry) is encrypted and authenticated, not merely signed: the address reveals
no identifier of the mail it fetches, so a proxy's access log, a browser's history or a
pasted link tells nobody which account or email it came from. The key id travels in clear
and is bound into the authentication, so a ring can hold several keys at once: the first
seals, every key opens what it sealed (rotation). A link altered in any byte, sealed under
another deployment's key, or under a key id this ring does not know, grants nothing.

Each key is 32 random bytes, written base64 (standard or URL-safe alphabet, padding optional)
in the secret its reference names.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import struct
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.domain.connections import SecretRef
from mailfathom.domain.download_links import (
    DOWNLOAD_PATH,
    DownloadGrant,
    DownloadsConfig,
    LinkFault,
)
from mailfathom.domain.errors import ConfigurationError

KEY_BYTES = 32
_NONCE_BYTES = 12
_VERSION = 1
# version, expiry (seconds since the epoch), stored email id, account id length
_HEAD = struct.Struct(">BQ16sB")
_ASSOCIATED = b"mailfathom download link v1\x00"
# Longer than any link this module seals; a longer token is refused before it is decoded.
MAX_TOKEN_CHARACTERS = 512
_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_PART_ID = re.compile(r"[1-9][0-9]{0,5}(\.[1-9][0-9]{0,5}){0,31}")


class KeyMaterialRefused(ValueError):
    """A key secret that is not 32 bytes written in base64. The message never repeats it."""


def decode_key(text: str) -> bytes:
    """The 32 octets a key secret writes in base64."""
    compact = "".join(text.split())
    try:
        key = base64.urlsafe_b64decode(
            compact.replace("+", "-").replace("/", "_") + "=" * (-len(compact) % 4)
        )
    except (binascii.Error, ValueError):
        raise KeyMaterialRefused("is not base64 text") from None
    if len(key) != KEY_BYTES:
        raise KeyMaterialRefused(f"must be {KEY_BYTES} random bytes written in base64")
    return key


@dataclass(frozen=True, slots=True)
class RingKey:
    key_id: str
    key: bytes = b""

    def __post_init__(self) -> None:
        if not _KEY_ID.fullmatch(self.key_id) or len(self.key) != KEY_BYTES:
            raise ValueError("a ring key needs a URL-safe id and 32 octets")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes | None:
    """The octets `text` encodes, only when it is the one encoding `_b64` writes for them:
    the spare bits of a last character are otherwise ignored, and an altered link would
    open as if it were the one issued."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if _b64(raw) == text else None


class SealedLinks:
    """Download links under one public base address, sealed with a key ring."""

    def __init__(
        self,
        public_base_url: str,
        ring: Sequence[RingKey],
        *,
        nonce: Callable[[int], bytes] = os.urandom,
    ) -> None:
        if not ring:
            raise ValueError("a key ring holds at least one key")
        self._base = public_base_url.rstrip("/") + DOWNLOAD_PATH
        self._sealing = ring[0]
        self._ciphers = {k.key_id: AESGCM(k.key) for k in ring}
        self._nonce = nonce

    def issue(self, grant: DownloadGrant) -> str:
        """The absolute address of a link granting `grant`."""
        return self._base + self.seal(grant)

    def seal(self, grant: DownloadGrant) -> str:
        account = grant.account_id.encode("utf-8")
        part = grant.part_id.encode("ascii")
        expires = int(grant.expires_at.timestamp())
        if len(account) > 255 or not _PART_ID.fullmatch(grant.part_id) or expires < 0:
            raise ValueError("the grant cannot be sealed into a link")
        plain = (
            _HEAD.pack(_VERSION, expires, grant.stored_email_id.bytes, len(account))
            + account
            + part
        )
        key_id = self._sealing.key_id
        nonce = self._nonce(_NONCE_BYTES)
        sealed = self._ciphers[key_id].encrypt(nonce, plain, _ASSOCIATED + key_id.encode())
        return f"{key_id}.{_b64(nonce + sealed)}"

    def open(self, token: str) -> DownloadGrant | LinkFault:
        """The grant a presented token carries, or why it carries none. Never raises."""
        if len(token) > MAX_TOKEN_CHARACTERS:
            return LinkFault.NOT_ISSUED_HERE
        key_id, dot, body = token.partition(".")
        if not dot or not _KEY_ID.fullmatch(key_id):
            return LinkFault.NOT_ISSUED_HERE
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            return LinkFault.KEY_RETIRED
        raw = _unb64(body)
        if raw is None or len(raw) <= _NONCE_BYTES:
            return LinkFault.NOT_ISSUED_HERE
        try:
            plain = cipher.decrypt(
                raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], _ASSOCIATED + key_id.encode()
            )
        except InvalidTag:
            return LinkFault.NOT_ISSUED_HERE
        return _grant(plain)


def _grant(plain: bytes) -> DownloadGrant | LinkFault:
    """The grant a sealed payload writes. It was authenticated, so a payload this module did
    not write can only come from a key shared with other software: it grants nothing."""
    if len(plain) < _HEAD.size:
        return LinkFault.NOT_ISSUED_HERE
    version, expires, email, account_length = _HEAD.unpack_from(plain)
    rest = plain[_HEAD.size :]
    if version != _VERSION or len(rest) <= account_length:
        return LinkFault.NOT_ISSUED_HERE
    try:
        account = rest[:account_length].decode("utf-8")
        part = rest[account_length:].decode("ascii")
        expires_at = datetime.fromtimestamp(expires, UTC)
    except (UnicodeDecodeError, ValueError, OverflowError, OSError):
        return LinkFault.NOT_ISSUED_HERE
    if not _PART_ID.fullmatch(part):
        return LinkFault.NOT_ISSUED_HERE
    return DownloadGrant(account, uuid.UUID(bytes=email), part, expires_at)


def links_of(
    config: DownloadsConfig, read: Callable[[SecretRef], str] = read_secret
) -> SealedLinks | None:
    """The deployment's links, or None where `[Downloads]` lacks a public address or keys.
    Every key secret is read once, here: one that cannot be read, or is not a key, stops
    whatever is starting, naming the configuration key and never the secret."""
    if config.public_base_url is None or not config.keys:
        return None
    ring = []
    for entry in config.keys:
        try:
            key = decode_key(read(entry.secret))
        except KeyMaterialRefused as refused:
            raise ConfigurationError(f"{entry.secret.origin}: the key {refused}") from None
        ring.append(RingKey(entry.key_id, key))
    return SealedLinks(config.public_base_url, ring)
