"""Every message of the shared corpora normalized and its HTML body sanitized: no
exception, and nothing active or remote in what comes out. A sweep of the whole corpus,
marked `soak` as the normalization sweep is."""

from __future__ import annotations

import mailbox
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.html.sanitize import NhHtmlSanitizer
from mailfathom.adapters.mime import normalize_message

from .parsed import parse
from .test_corpus_payloads import offences


def _messages(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    if not data.startswith(b"From "):
        yield data
        return
    box = mailbox.mbox(path, create=False)
    try:
        for key in box.iterkeys():
            yield box.get_bytes(key)
    finally:
        box.close()


@pytest.mark.soak
def test_every_corpus_message_has_its_html_sanitized(corpora: Path) -> None:
    sanitizer = NhHtmlSanitizer()
    sanitized = 0
    failures: dict[str, str] = {}
    for path in sorted((corpora / "messages").rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        for index, raw in enumerate(_messages(path)):
            where = f"{path.relative_to(corpora)}#{index}"
            try:
                html = normalize_message(raw).html
                if html is None:
                    continue
                found = offences(parse(sanitizer.sanitize(html)), remote_images=False)
            except Exception as error:
                failures[where] = type(error).__name__
                continue
            sanitized += 1
            if found:
                failures[where] = ", ".join(found)
    assert failures == {}
    assert sanitized > 400
