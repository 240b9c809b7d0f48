"""Ports the reading use cases need beyond the stored mail (`app.shared.stored_mail_ports`)."""

from __future__ import annotations

from typing import Protocol


class CursorSigner(Protocol):
    def sign(self, payload: bytes) -> str:
        """An opaque, URL-safe text carrying `payload` and its authentication tag."""
        ...

    def open(self, token: str) -> bytes | None:
        """The payload of a token this signer issued, or None for anything else."""
        ...


class HtmlSanitizer(Protocol):
    def sanitize(self, html: str) -> str:
        """HTML with everything active or remote removed; safe to show as is."""
        ...
