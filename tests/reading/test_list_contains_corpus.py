"""list_emails' contains on real mail: walking every page finds exactly the emails whose
indexed body text, read back from the store, carries the fragment in any case, newest
first. SpamAssassin easy_ham messages in a local account; fragments with and without inner
words, so that the index narrowing is exercised against the plain check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.app.reading import body_filter
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from reading.local_mailbox import corpus_mailbox, stored_texts

CORPUS = "spamassassin-easy-ham-1"
MESSAGES = 300
FRAGMENTS = [
    "razor",
    "SpamAssassin",
    "in the",
    "of the list",
    "mailing list",
    "http://www.",
    "to unsubscribe",
    "irish linux users",
    "i think it",
    "exmh",
    "ation of",
]

# Synchronizing the corpus starts the preparing worker processes.
pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def services(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = tmp_path_factory.mktemp("contains-corpus")
    with corpus_mailbox(corpora / "messages" / CORPUS, MESSAGES, root) as opened:
        yield opened


def _carrying(services: Services, fragment: str) -> list[str]:
    rows, bodies = stored_texts(services)
    assert len(rows) == MESSAGES
    folded = fragment.casefold()
    return [str(r.stored_email_id) for r in rows if folded in bodies.get(r.seq, "").casefold()]


def _walked(services: Services, fragment: str) -> tuple[list[str], int]:
    """The emails every page of the walk holds, and how many bodies the walk read."""
    caller = Caller(ALL_PERMISSIONS, "corpus")
    found: list[str] = []
    read = 0
    cursor = None
    for _ in range(100):
        request = TimelineRequest(
            selection=SelectionInput(), contains=fragment, page_size=100, cursor=cursor
        )
        page = services.reading().timeline.read(caller, request)
        assert page.contains_scan is not None
        assert not page.contains_scan.cut
        read += page.contains_scan.bodies_examined
        found.extend(str(e.stored_email_id) for e in page.emails)
        cursor = page.next_cursor
        if cursor is None:
            return found, read
    raise AssertionError("the walk did not end")


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_contains_on_corpus_mail_finds_the_bodies_carrying_the_fragment(
    services: Services, fragment: str
) -> None:
    expected = _carrying(services, fragment)
    assert 0 < len(expected) < MESSAGES
    walked, read = _walked(services, fragment)
    assert walked == expected
    if body_filter.inner_words(fragment):
        assert read < MESSAGES
