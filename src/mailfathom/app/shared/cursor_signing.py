"""The port every continuation cursor is signed through, whatever it continues."""

from __future__ import annotations

from typing import Protocol


class CursorSigner(Protocol):
    def sign(self, payload: bytes) -> str:
        """An opaque, URL-safe text carrying `payload` and its authentication tag."""
        ...

    def open(self, token: str) -> bytes | None:
        """The payload of a token this signer issued, or None for anything else."""
        ...
