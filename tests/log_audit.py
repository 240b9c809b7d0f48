"""The log audit: everything our code logs during the test run is copied to one file, and
every piece of mail content the tests used is registered here. As each test finishes, the
lines logged since the previous one finished are checked against everything registered so far
(`audit_new_lines`, called from tests/conftest.py), so each test answers for its own logging,
whatever order the tests run in.

Processes started by tests inherit `MAILFATHOM_LOG_COPY` and append to the same file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from email import policy
from email.parser import BytesParser
from email.utils import getaddresses
from pathlib import Path

MIN_FRAGMENT = 6
_registered: set[str] = set()
_WORD = re.compile(r"\w")
_PARSER = BytesParser(policy=policy.compat32)


def register(*fragments: str | None) -> None:
    """Mail content a test used (subjects, addresses, body text). Short or word-less text is
    skipped: it would match ordinary log words by chance."""
    for fragment in fragments:
        if fragment is None:
            continue
        text = fragment.strip()
        if len(text) >= MIN_FRAGMENT and _WORD.search(text):
            _registered.add(text)


def register_headers(raw: bytes) -> None:
    """The subject and addresses of a real message. Only longer subjects count: a corpus
    holds subjects such as "test" that ordinary log words would match by chance."""
    try:
        headers = _PARSER.parsebytes(raw, headersonly=True)
        subject = str(headers.get("subject", "") or "")
        addresses = [a for _, a in getaddresses([str(v) for v in headers.get_all("from", [])])]
        addresses += [a for _, a in getaddresses([str(v) for v in headers.get_all("to", [])])]
    except Exception:  # a hostile header the parser cannot read is not ours to audit
        return
    if len(subject.strip()) >= 12:
        register(subject)
    register(*(a for a in addresses if "@" in a))


def register_all(fragments: Iterable[str | None]) -> None:
    register(*fragments)


def registered() -> frozenset[str]:
    return frozenset(_registered)


def copy_path() -> Path | None:
    value = os.environ.get("MAILFATHOM_LOG_COPY")
    return Path(value) if value else None


def leaked(text: str, fragments: Iterable[str]) -> list[str]:
    """The fragments that appear in `text`, ignoring case."""
    lowered = text.lower()
    return sorted(f for f in fragments if f.lower() in lowered)


_audited_octets = 0


def audit_new_lines() -> None:
    """Check the complete lines copied since the last audit for registered mail content."""
    global _audited_octets
    path = copy_path()
    if path is None or not path.exists():
        return
    with path.open("rb") as copy:
        copy.seek(_audited_octets)
        new = copy.read()
    complete = new[: new.rfind(b"\n") + 1]  # a line still being written waits for the next
    _audited_octets += len(complete)
    found = leaked(complete.decode("utf-8", "replace"), _registered)
    assert not found, f"{len(found)} registered fragments appear in the logs: {found[:20]}"
