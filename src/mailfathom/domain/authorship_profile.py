"""The weighting the authorship reading is computed under, and the name it is published by.

Each signal that fired contributes its weight as an independent piece of evidence, and the
likelihood is what all of them together leave unexplained (a noisy-or):
`1 - (1 - w1)(1 - w2)...`, so one signal alone reads as its weight, each further signal
raises the number less than the one before, and nothing reaches 1. The band is read from the
likelihood against two thresholds.

The weights place each kind of signal where it belongs: a character fact alone reaches
`possible` or `likely` by itself, and no style signal alone leaves `unlikely` (style signals
mean nothing individually); any two style signals read `possible`, and the three heaviest
together (or all four) `likely`.

`revision` names a profile by a short hash of everything that changes the number or the band
(every weight, both thresholds, the style minimum, and how much of a body the style signals
read, since a longer or shorter sample can turn a signal on or off), so two readings carrying
the same revision are comparable and a changed weight can never be published under an old
name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mailfathom.domain.authorship import AuthorshipSignal, AuthorshipState
from mailfathom.domain.authorship_style import STYLE_MINIMUM_WORDS
from mailfathom.domain.authorship_text import STYLE_CHARACTER_LIMIT

DEFAULT_WEIGHTS: Mapping[AuthorshipSignal, float] = MappingProxyType(
    {
        AuthorshipSignal.TAG_CHARACTERS: 0.9,
        AuthorshipSignal.VARIATION_SELECTOR_RUN: 0.8,
        AuthorshipSignal.BIDIRECTIONAL_OVERRIDES: 0.6,
        AuthorshipSignal.HIDDEN_CHARACTERS: 0.45,
        AuthorshipSignal.FORMULAIC_FRAMING: 0.3,
        AuthorshipSignal.LIST_SCAFFOLDING: 0.27,
        AuthorshipSignal.UNSPACED_EM_DASHES: 0.25,
        AuthorshipSignal.UNIFORM_TYPOGRAPHY: 0.15,
    }
)
LIKELY_FROM = 0.6
POSSIBLE_FROM = 0.35
_REVISION_PREFIX = "ma1-"


@dataclass(frozen=True, slots=True)
class AuthorshipProfile:
    """Weights for every signal, the likelihoods from which a reading is `likely`
    (`likely_from`) and `possible` (`possible_from`), the fewest words the style signals read
    (`style_minimum_words`) and how many characters of a body they read at most
    (`style_character_limit`)."""

    weights: Mapping[AuthorshipSignal, float] = field(default_factory=lambda: DEFAULT_WEIGHTS)
    likely_from: float = LIKELY_FROM
    possible_from: float = POSSIBLE_FROM
    style_minimum_words: int = STYLE_MINIMUM_WORDS
    style_character_limit: int = STYLE_CHARACTER_LIMIT

    def __post_init__(self) -> None:
        if set(self.weights) != set(AuthorshipSignal):
            raise ValueError("an authorship profile weighs every signal")
        if not all(0.0 <= w < 1.0 for w in self.weights.values()):
            raise ValueError("an authorship weight lies in [0, 1)")
        if not 0.0 < self.possible_from <= self.likely_from < 1.0:
            raise ValueError("the authorship bands are 0 < possible <= likely < 1")
        if self.style_character_limit <= 0:
            raise ValueError("the style signals read at least one character")

    @property
    def revision(self) -> str:
        table = {
            "weights": {s.value: self.weights[s] for s in AuthorshipSignal},
            "likely": self.likely_from,
            "possible": self.possible_from,
            "styleMinimumWords": self.style_minimum_words,
            "styleCharacterLimit": self.style_character_limit,
        }
        canonical = json.dumps(table, sort_keys=True, separators=(",", ":"))
        return _REVISION_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def strongest_first(self, signals: Iterable[AuthorshipSignal]) -> tuple[AuthorshipSignal, ...]:
        """`signals` heaviest first; signals of one weight in the order the type declares
        them (the character facts before the style observations)."""
        order = list(AuthorshipSignal)
        return tuple(sorted(set(signals), key=lambda s: (-self.weights[s], order.index(s))))

    def likelihood(self, signals: Iterable[AuthorshipSignal]) -> float:
        unexplained = 1.0
        for signal in set(signals):
            unexplained *= 1.0 - self.weights[signal]
        return round(1.0 - unexplained, 4)

    def band(self, likelihood: float) -> AuthorshipState:
        if likelihood >= self.likely_from:
            return AuthorshipState.LIKELY
        if likelihood >= self.possible_from:
            return AuthorshipState.POSSIBLE
        return AuthorshipState.UNLIKELY


DEFAULT_PROFILE = AuthorshipProfile()
