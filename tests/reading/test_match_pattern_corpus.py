"""matchPattern on real mail agrees with Python's own regular expressions.

A few hundred SpamAssassin easy_ham messages are synchronized from a local account; for each
pattern both engines read alike, the emails search_emails keeps (newest first, the first 50)
are those Python's `re`, ignoring case, finds in the same sender address, sender name,
subject and indexed body text read back from the store."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.app.reading.search_emails import MAX_RESULT_LIMIT, SearchRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from reading.local_mailbox import corpus_mailbox, stored_texts

CORPUS = "spamassassin-easy-ham-1"
MESSAGES = 400
PATTERNS = [
    "razor",
    r"^re: ",
    r"\bspamassassin\b",
    r"https?://[a-z0-9.-]+\.ie/",
    r"\d{4}-\d{2}-\d{2}",
    r"(?:linux|unix) (?:kernel|box|users?)",
    r"[a-z]+@[a-z]+\.(?:ie|net)",
    "exmh",
    r"perl\s+-\w",
    r"\$\d+(?:\.\d\d)?",
    r"irish (?:linux|internet)",
    "zzzz",
]

# Synchronizing the corpus starts the preparing worker processes.
pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def services(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = tmp_path_factory.mktemp("pattern-corpus")
    with corpus_mailbox(corpora / "messages" / CORPUS, MESSAGES, root) as opened:
        yield opened


def _found(services: Services, pattern: str) -> list[str]:
    """Every email Python's `re` finds the pattern in, newest first."""
    rows, bodies = stored_texts(services)
    assert len(rows) == MESSAGES
    compiled = re.compile(pattern, re.IGNORECASE)
    return [
        str(r.stored_email_id)
        for r in rows
        if any(
            compiled.search(field)
            for field in (r.sender_address or "", r.sender_name or "", r.subject or "")
        )
        or compiled.search(bodies.get(r.seq, ""))
    ]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_matches_on_corpus_mail_are_those_python_re_finds(services: Services, pattern: str) -> None:
    request = SearchRequest(
        query_text=None,
        selection=SelectionInput(),
        match_pattern=pattern,
        result_limit=MAX_RESULT_LIMIT,
    )
    result = services.reading().search.search(Caller(ALL_PERMISSIONS, "corpus"), request)
    assert result.pattern_scan is not None
    assert not result.pattern_scan.cut
    got = [str(m.summary.stored_email_id) for m in result.matches]
    assert got == _found(services, pattern)[:MAX_RESULT_LIMIT]


def test_the_corpus_patterns_find_something_and_not_everything(services: Services) -> None:
    """The comparison means something only if the patterns discriminate."""
    counts = [len(_found(services, p)) for p in PATTERNS]
    assert all(0 < c < MESSAGES for c in counts)
