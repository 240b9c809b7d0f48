"""The reading on real mail and on the generated set, through the MIME normalizer as
synchronization reads it. The bounds come from the confusion table in docs/authorship.md
(measured there by bench/authorship_confusion.py):

- hand-written list mail (linux-mips-2005, spamassassin-easy-ham-1): 0 of 2,926 assessed
  messages were flagged; the bound is under 1 % flagged (possible or likely). The commonest
  single style signal on that mail, list scaffolding, fires on about 0.9 % of it, so the
  bound fails as soon as that signal alone would be enough to flag a message, or as soon as
  it routinely coincides with a second one.
- the generated set (tests/authorship/generated): 20 of 22 flagged, the two misses the
  deliberately short replies; the bound is at least 80 % flagged, so three more misses fail
  it, and every message carrying hidden characters flagged.

The corpora are found through the `corpora` fixture: absent, the first test is reported as
skipped saying so (and fails in CI, where they must be present); the generated set ships
with the tests and is always read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.authorship import AuthorshipReading, AuthorshipState
from mailfathom.domain.authorship_assessor import MachineAuthorshipAssessor

GENERATED = Path(__file__).resolve().parent / "generated"
HAND_WRITTEN = ("messages/linux-mips-2005", "messages/spamassassin-easy-ham-1")
FLAGGED = {AuthorshipState.POSSIBLE, AuthorshipState.LIKELY}
MOST_FLAGGED_HAND_WRITTEN = 0.01
LEAST_FLAGGED_GENERATED = 0.8

ASSESSOR = MachineAuthorshipAssessor()


def read(path: Path) -> AuthorshipReading:
    message = normalize_message(path.read_bytes())
    return ASSESSOR.assess(message.subject, message.plain_text)


@pytest.mark.corpus
def test_hand_written_list_mail_is_rarely_flagged(corpora: Path) -> None:
    readings = [
        read(path)
        for folder in HAND_WRITTEN
        for path in sorted((corpora / folder).iterdir())
        if path.is_file()
    ]
    assessed = [r for r in readings if r.state is not AuthorshipState.NOT_ASSESSED]
    flagged = [r for r in assessed if r.state in FLAGGED]
    assert len(readings) > 5000
    assert len(assessed) > 2500
    assert len(flagged) / len(assessed) < MOST_FLAGGED_HAND_WRITTEN


def test_the_generated_set_is_mostly_caught() -> None:
    paths = sorted(GENERATED.glob("*.eml"))
    readings = {path.name: read(path) for path in paths}
    assert len(readings) >= 20
    languages = {name.split("-")[0] for name in readings}
    assert {"en", "cs", "sk", "chars"} <= languages
    flagged = [name for name, r in readings.items() if r.state in FLAGGED]
    assert len(flagged) / len(readings) >= LEAST_FLAGGED_GENERATED
    hidden = [name for name in readings if name.startswith("chars-")]
    assert set(hidden) <= set(flagged)
    for language in ("en", "cs", "sk"):
        mine = [n for n in readings if n.startswith(f"{language}-")]
        assert sum(n in flagged for n in mine) / len(mine) >= LEAST_FLAGGED_GENERATED
