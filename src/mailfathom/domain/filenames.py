"""Attachment file names made safe to show, store and eventually write to disk.

A file name in a MIME part (Content-Disposition ``filename``, RFC 2183 section 2.3, or the
older Content-Type ``name``) is chosen by the sender. RFC 2183 section 5 warns that it must
not be trusted as a path: it may carry directories, traversal segments or characters that
make a name display differently from what it is (a right-to-left override, U+202E, shows
``invoice<U+202E>fdp.exe`` as ``invoiceexe.pdf``). The rules here keep only a bare, printable,
bounded name, and report whether anything had to change so a reader can be told.
"""

from __future__ import annotations

import re
import unicodedata

MAX_FILE_NAME_LENGTH = 200
"""Longest name kept, in code points; longer names are cut, keeping a short extension."""

_MAX_EXTENSION_LENGTH = 16
_PATH_SEPARATORS = re.compile(r"[/\\]")
_C0_C1_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})
# Names longer than this are cut before the per-character pass so hostile input stays cheap;
# the head and the tail survive, which is all the final cut keeps anyway.
_PREFILTER_LIMIT = 4 * MAX_FILE_NAME_LENGTH
_PREFILTER_TAIL = 2 * _MAX_EXTENSION_LENGTH


def normalize_file_name(raw: str | None) -> tuple[str | None, bool]:
    """Return ``(name, rewritten)`` for a sender-supplied file name.

    ``name`` is None when nothing usable remains (absent, empty, only dots, only
    invisible characters). ``rewritten`` is True when the returned name differs from
    the written one, including when a non-empty written name was rejected entirely.
    """
    if raw is None or raw == "":
        return None, False
    name = _last_segment(raw)
    if len(name) > _PREFILTER_LIMIT:
        name = name[: _PREFILTER_LIMIT - _PREFILTER_TAIL] + name[-_PREFILTER_TAIL:]
    name = _C0_C1_CONTROLS.sub(" ", name)
    if not name.isprintable():
        name = "".join(
            " " if ch.isspace() else ch
            for ch in name
            if unicodedata.category(ch) not in _REMOVED_CATEGORIES
        )
    name = unicodedata.normalize("NFC", name)
    # Removing characters can expose a separator-free traversal such as ".\u200e." -> "..";
    # stripping leading dots below turns any such segment into nothing.
    name = " ".join(name.split())
    name = name.lstrip(". ").rstrip()
    name = _cut(name)
    if not name:
        return None, True
    return name, name != raw


def _last_segment(raw: str) -> str:
    """The last non-empty path segment, for both POSIX and Windows separators."""
    for segment in reversed(_PATH_SEPARATORS.split(raw)):
        if segment.strip():
            return segment
    return ""


def _cut(name: str) -> str:
    if len(name) <= MAX_FILE_NAME_LENGTH:
        return name
    stem, dot, extension = name.rpartition(".")
    if dot and stem and 0 < len(extension) < _MAX_EXTENSION_LENGTH and " " not in extension:
        keep = MAX_FILE_NAME_LENGTH - len(extension) - 1
        return stem[:keep].rstrip(" .") + "." + extension
    return name[:MAX_FILE_NAME_LENGTH].rstrip()
