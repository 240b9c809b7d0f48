"""The media type of a file named without one: from its file name's extension, by the
standard library's table (`mimetypes`, its built-in map only, so the answer does not depend
on which files this machine happens to hold), else application/octet-stream."""

from __future__ import annotations

import mimetypes

_TABLE = mimetypes.MimeTypes(filenames=())
UNKNOWN = "application/octet-stream"
_COMPRESSED = {
    "gzip": "application/gzip",
    "bzip2": "application/x-bzip2",
    "xz": "application/x-xz",
    "br": "application/x-brotli",
}


def from_file_name(file_name: str | None) -> str:
    if not file_name:
        return UNKNOWN
    guessed, encoding = _TABLE.guess_type(file_name, strict=False)
    # A compressed file ("a.tar.gz") is named by its compression, not by what it holds.
    if encoding is not None:
        return _COMPRESSED.get(encoding, UNKNOWN)
    return guessed or UNKNOWN
