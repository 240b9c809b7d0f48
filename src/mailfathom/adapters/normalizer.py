"""The MIME normalizer behind the `Normalizer` port."""

from __future__ import annotations

from mailfathom.adapters.mime import normalize_headers, normalize_message
from mailfathom.domain.message import NormalizedMessage


class MimeNormalizer:
    def message(self, raw: bytes) -> NormalizedMessage:
        return normalize_message(raw)

    def headers(self, raw_header: bytes) -> NormalizedMessage:
        return normalize_headers(raw_header)
