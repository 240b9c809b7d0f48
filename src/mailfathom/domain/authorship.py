"""How much a message's own text reads as machine written, as it is stored and published.

The reading is a heuristic estimate, informational and never a safety signal. It is taken
once, when a message is stored, and published as a band and a number; the signals behind it
name what the text carried and nothing else (no position, no count, no matched text).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class AuthorshipState(enum.Enum):
    LIKELY = "likely"
    POSSIBLE = "possible"
    UNLIKELY = "unlikely"
    NOT_ASSESSED = "notAssessed"


class AuthorshipSignal(enum.Enum):
    """What the text carried. The first four are facts about its characters (text no mail
    client renders); the last four are observations about style that careful writers also
    produce and that mean nothing individually."""

    TAG_CHARACTERS = "tagCharacters"
    VARIATION_SELECTOR_RUN = "variationSelectorRun"
    HIDDEN_CHARACTERS = "hiddenCharacters"
    BIDIRECTIONAL_OVERRIDES = "bidirectionalOverrides"
    FORMULAIC_FRAMING = "formulaicFraming"
    UNSPACED_EM_DASHES = "unspacedEmDashes"
    LIST_SCAFFOLDING = "listScaffolding"
    UNIFORM_TYPOGRAPHY = "uniformTypography"


@dataclass(frozen=True, slots=True)
class AuthorshipReading:
    """`signals` strongest first; `profile_revision` names the weighting `likelihood` was
    computed under (two likelihoods compare only under the same revision). Nothing assessed:
    state `NOT_ASSESSED`, likelihood 0, no signals, no revision."""

    state: AuthorshipState
    likelihood: float
    signals: tuple[AuthorshipSignal, ...]
    profile_revision: str | None


NOT_ASSESSED = AuthorshipReading(AuthorshipState.NOT_ASSESSED, 0.0, (), None)
