"""Reading how much a message's own text reads as machine written, once, when it is stored.

`MachineAuthorshipAssessor.assess` is what synchronization calls for every message it stores:
pure computation over the subject and the plain-text body, safe to call from several threads
at once (it keeps no state between calls), and it never raises — a failure inside it reads as
`NOT_ASSESSED`, the same as a message nothing assessed.

Which messages are assessed:
- a message with no readable body (an empty or blank plain text) is `NOT_ASSESSED`;
- the character signals are read over the subject and the whole body;
- the style signals are read only over the author's own text, and only when it holds at least
  the profile's minimum of words; a message too short for them that carries no character
  signal is `NOT_ASSESSED` too, because "nothing fired" would claim more than was read;
- everything else is assessed: `unlikely` with likelihood 0 when nothing fired.

The reading is informational and never a safety signal: see docs/authorship.md.
"""

from __future__ import annotations

from mailfathom.domain.authorship import (
    NOT_ASSESSED,
    AuthorshipReading,
    AuthorshipSignal,
)
from mailfathom.domain.authorship_characters import character_signals
from mailfathom.domain.authorship_profile import DEFAULT_PROFILE, AuthorshipProfile
from mailfathom.domain.authorship_style import style_signals
from mailfathom.domain.config import MachineAuthorshipConfig


class MachineAuthorshipAssessor:
    """Assesses text under one `AuthorshipProfile` (the default weighting unless told)."""

    def __init__(self, profile: AuthorshipProfile = DEFAULT_PROFILE) -> None:
        self._profile = profile
        self._revision = profile.revision

    @property
    def profile_revision(self) -> str:
        return self._revision

    def assess(self, subject: str | None, plain_text: str) -> AuthorshipReading:
        try:
            return self._assess(subject or "", plain_text)
        except Exception:
            return NOT_ASSESSED

    def _assess(self, subject: str, plain_text: str) -> AuthorshipReading:
        if not plain_text.strip():
            return NOT_ASSESSED
        facts = character_signals(subject) | character_signals(plain_text)
        style = style_signals(
            plain_text, self._profile.style_minimum_words, self._profile.style_character_limit
        )
        if style is None and not facts:
            return NOT_ASSESSED
        fired: frozenset[AuthorshipSignal] = facts | (style or frozenset())
        likelihood = self._profile.likelihood(fired)
        return AuthorshipReading(
            state=self._profile.band(likelihood),
            likelihood=likelihood,
            signals=self._profile.strongest_first(fired),
            profile_revision=self._revision,
        )


def build_authorship_assessor(
    config: MachineAuthorshipConfig,
) -> MachineAuthorshipAssessor | None:
    """The assessor a deployment runs, or None when `[MachineAuthorship] Enabled` is false
    (then synchronization stores `NOT_ASSESSED` for every message)."""
    return MachineAuthorshipAssessor() if config.enabled else None
