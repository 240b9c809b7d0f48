"""Importing into a local folder without holding the same message twice.

An imported message is filed under the SHA-256 of its bytes, so the folder refuses bytes it
already holds: whether they came from an earlier import or from any other delivery (those
files are hashed once, when the first message of an import is offered).

What is filed may differ from the bytes offered: `filed` rewrites them first (the deployment
puts its own field above a copy of its authserv-id, see `deployment_results`); the name still
comes from the bytes offered, so importing the same source again adds nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mailfathom.adapters.local.import_sources import read_source
from mailfathom.adapters.local.maildir import MaildirFolder

_SUFFIX = ".import"
_IMPORTED = re.compile(r"([0-9a-f]{64})" + re.escape(_SUFFIX) + r"(?::2,.*)?")


class FolderImport:
    def __init__(self, folder: MaildirFolder, filed: Callable[[bytes], bytes]) -> None:
        self._folder = folder
        self._filed = filed
        self._held: set[str] | None = None

    def _digests(self) -> set[str]:
        if self._held is None:
            self._folder.create()
            held: set[str] = set()
            for sub in ("new", "cur"):
                for entry in os.scandir(self._folder.path / sub):
                    if entry.name.startswith(".") or not entry.is_file():
                        continue
                    named = _IMPORTED.fullmatch(entry.name)
                    if named is not None:
                        held.add(named.group(1))
                        continue
                    try:
                        with open(entry.path, "rb") as handle:
                            held.add(hashlib.file_digest(handle, "sha256").hexdigest())
                    except FileNotFoundError:
                        continue
            self._held = held
        return self._held

    def add(self, raw: bytes, flags: str, received_at: datetime | None) -> bool:
        """File `raw` unless this folder already holds the same bytes; answers whether it
        was added."""
        digest = hashlib.sha256(raw).hexdigest()
        held = self._digests()
        if digest in held:
            return False
        filed = self._filed(raw)
        added = self._folder.deliver_once(filed, digest + _SUFFIX, flags, received_at)
        held.add(digest)
        return added


@dataclass(frozen=True, slots=True)
class ImportCount:
    added: int
    already_held: int


def import_source(
    folder: MaildirFolder, source: Path, filed: Callable[[bytes], bytes]
) -> ImportCount:
    """File every message of `source` (see `import_sources`) into `folder`, once, as
    `filed` rewrites it."""
    target = FolderImport(folder, filed)
    added = held = 0
    for message in read_source(source):
        if target.add(message.raw, message.flags, message.received_at):
            added += 1
        else:
            held += 1
    return ImportCount(added=added, already_held=held)
