"""Ports the reading use cases need beyond the stored mail (`app.shared.stored_mail_ports`)."""

from __future__ import annotations

from typing import Protocol


class HtmlSanitizer(Protocol):
    def sanitize(self, html: str) -> str:
        """HTML with everything active or remote removed; safe to show as is."""
        ...
