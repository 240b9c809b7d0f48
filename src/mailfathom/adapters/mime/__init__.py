"""Reading raw MIME messages into the normalized form the rest of the system uses."""

from mailfathom.adapters.mime.normalize import normalize_headers, normalize_message

__all__ = ["normalize_headers", "normalize_message"]
