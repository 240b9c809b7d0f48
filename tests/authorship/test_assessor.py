"""The reading as synchronization stores it: which messages are assessed, the order of the
signals, the bands, the weighting's revision, and that assessing never raises."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

import pytest

from authorship.texts import HAND_TYPED, padded
from mailfathom.domain.authorship import (
    NOT_ASSESSED,
    AuthorshipSignal,
    AuthorshipState,
)
from mailfathom.domain.authorship_assessor import MachineAuthorshipAssessor
from mailfathom.domain.authorship_profile import (
    DEFAULT_PROFILE,
    DEFAULT_WEIGHTS,
    LIKELY_FROM,
    POSSIBLE_FROM,
    AuthorshipProfile,
)

S = AuthorshipSignal
ASSESSOR = MachineAuthorshipAssessor()
TAGGED = "".join(chr(0xE0000 + ord(c)) for c in "hidden")
FRAMING = "I hope this email finds you well. Please don't hesitate to reach out."
DASHES = "this\u2014and that\u2014matter"
SCAFFOLD = "- **Design:** done\n- **Build:** half way"


def test_no_readable_body_is_not_assessed() -> None:
    assert ASSESSOR.assess("Subject", "") == NOT_ASSESSED
    assert ASSESSOR.assess("Subject", " \n\t ") == NOT_ASSESSED
    assert ASSESSOR.assess(f"Subject {TAGGED}", "") == NOT_ASSESSED


def test_short_text_without_a_character_signal_is_not_assessed() -> None:
    assert ASSESSOR.assess(None, FRAMING) == NOT_ASSESSED


def test_short_text_with_a_character_signal_is_assessed_on_it_alone() -> None:
    reading = ASSESSOR.assess(None, f"{FRAMING} {TAGGED}")
    assert reading.signals == (S.TAG_CHARACTERS,)
    assert reading.state is AuthorshipState.LIKELY
    assert reading.profile_revision == DEFAULT_PROFILE.revision


def test_a_character_signal_in_the_subject_counts() -> None:
    reading = ASSESSOR.assess(f"Agenda{TAGGED}", "see you there")
    assert reading.signals == (S.TAG_CHARACTERS,)


def test_long_text_with_nothing_fired_is_unlikely_at_zero() -> None:
    reading = ASSESSOR.assess("Build box", HAND_TYPED)
    assert reading.state is AuthorshipState.UNLIKELY
    assert reading.likelihood == 0.0
    assert reading.signals == ()
    assert reading.profile_revision == DEFAULT_PROFILE.revision


def test_signals_come_strongest_first() -> None:
    text = padded(f"{FRAMING}\n{DASHES}\n{SCAFFOLD}\npass\u200bword \u202e x {TAGGED}")
    reading = ASSESSOR.assess(None, text)
    assert reading.signals == (
        S.TAG_CHARACTERS,
        S.BIDIRECTIONAL_OVERRIDES,
        S.HIDDEN_CHARACTERS,
        S.FORMULAIC_FRAMING,
        S.LIST_SCAFFOLDING,
        S.UNSPACED_EM_DASHES,
    )
    weights = [DEFAULT_WEIGHTS[s] for s in reading.signals]
    assert weights == sorted(weights, reverse=True)


def test_the_order_follows_the_weights_not_the_text() -> None:
    reversed_weights = {s: DEFAULT_WEIGHTS[s] for s in S}
    reversed_weights[S.UNSPACED_EM_DASHES] = 0.95
    profile = AuthorshipProfile(weights=reversed_weights)
    reading = MachineAuthorshipAssessor(profile).assess(None, padded(f"{DASHES} {TAGGED}"))
    assert reading.signals == (S.UNSPACED_EM_DASHES, S.TAG_CHARACTERS)


def test_the_likelihood_combines_the_weights() -> None:
    reading = ASSESSOR.assess(None, padded(f"{FRAMING}\n{SCAFFOLD}"))
    expected = 1 - (1 - DEFAULT_WEIGHTS[S.FORMULAIC_FRAMING]) * (
        1 - DEFAULT_WEIGHTS[S.LIST_SCAFFOLDING]
    )
    assert reading.likelihood == pytest.approx(expected, abs=1e-4)
    assert reading.state is AuthorshipState.POSSIBLE


def test_no_style_signal_alone_leaves_unlikely_and_every_character_signal_does() -> None:
    for signal in (S.FORMULAIC_FRAMING, S.LIST_SCAFFOLDING, S.UNSPACED_EM_DASHES):
        assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood({signal})) is (
            AuthorshipState.UNLIKELY
        )
    assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood({S.UNIFORM_TYPOGRAPHY})) is (
        AuthorshipState.UNLIKELY
    )
    assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood({S.HIDDEN_CHARACTERS})) is (
        AuthorshipState.POSSIBLE
    )
    for signal in (S.TAG_CHARACTERS, S.VARIATION_SELECTOR_RUN, S.BIDIRECTIONAL_OVERRIDES):
        assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood({signal})) is (
            AuthorshipState.LIKELY
        )


def test_any_two_style_signals_read_possible_and_the_three_heaviest_likely() -> None:
    style = [S.FORMULAIC_FRAMING, S.LIST_SCAFFOLDING, S.UNSPACED_EM_DASHES, S.UNIFORM_TYPOGRAPHY]
    for first in style:
        for second in style:
            if first is not second:
                likelihood = DEFAULT_PROFILE.likelihood({first, second})
                assert DEFAULT_PROFILE.band(likelihood) is AuthorshipState.POSSIBLE
    assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood(style[:3])) is AuthorshipState.LIKELY
    assert DEFAULT_PROFILE.band(DEFAULT_PROFILE.likelihood(style)) is AuthorshipState.LIKELY


def test_no_two_signals_share_a_weight() -> None:
    assert len(set(DEFAULT_WEIGHTS.values())) == len(S)


@pytest.mark.parametrize(
    ("likelihood", "state"),
    [
        (0.0, AuthorshipState.UNLIKELY),
        (POSSIBLE_FROM - 0.0001, AuthorshipState.UNLIKELY),
        (POSSIBLE_FROM, AuthorshipState.POSSIBLE),
        (LIKELY_FROM - 0.0001, AuthorshipState.POSSIBLE),
        (LIKELY_FROM, AuthorshipState.LIKELY),
        (0.9999, AuthorshipState.LIKELY),
    ],
)
def test_the_band_thresholds(likelihood: float, state: AuthorshipState) -> None:
    assert DEFAULT_PROFILE.band(likelihood) is state


def test_the_revision_changes_with_any_weight_or_threshold() -> None:
    revisions = {DEFAULT_PROFILE.revision}
    for signal in S:
        weights = dict(DEFAULT_WEIGHTS)
        weights[signal] = round(weights[signal] + 0.01, 4)
        revisions.add(AuthorshipProfile(weights=weights).revision)
    revisions.add(dataclasses.replace(DEFAULT_PROFILE, likely_from=0.61).revision)
    revisions.add(dataclasses.replace(DEFAULT_PROFILE, possible_from=0.36).revision)
    revisions.add(dataclasses.replace(DEFAULT_PROFILE, style_minimum_words=51).revision)
    assert len(revisions) == len(S) + 4


def test_the_revision_changes_with_the_style_character_limit() -> None:
    limit = DEFAULT_PROFILE.style_character_limit
    revisions = {
        dataclasses.replace(DEFAULT_PROFILE, style_character_limit=limit + change).revision
        for change in (-1, 0, 1)
    }
    assert len(revisions) == 3
    assert DEFAULT_PROFILE.revision in revisions


def test_the_style_signals_read_only_the_profile_s_character_limit() -> None:
    text = padded(HAND_TYPED) + "\n\n" + FRAMING
    whole = dataclasses.replace(DEFAULT_PROFILE, style_character_limit=len(text))
    opening = dataclasses.replace(DEFAULT_PROFILE, style_character_limit=len(text) - len(FRAMING))
    read_whole = MachineAuthorshipAssessor(whole).assess(None, text)
    read_opening = MachineAuthorshipAssessor(opening).assess(None, text)
    assert S.FORMULAIC_FRAMING in read_whole.signals
    assert S.FORMULAIC_FRAMING not in read_opening.signals
    assert read_whole.profile_revision != read_opening.profile_revision


def test_the_style_signals_read_at_least_one_character() -> None:
    with pytest.raises(ValueError, match="style signals"):
        dataclasses.replace(DEFAULT_PROFILE, style_character_limit=0)


def test_the_revision_is_stable_for_the_same_table() -> None:
    same = AuthorshipProfile(weights=dict(reversed(list(DEFAULT_WEIGHTS.items()))))
    assert same.revision == DEFAULT_PROFILE.revision
    assert MachineAuthorshipAssessor().profile_revision == DEFAULT_PROFILE.revision


@pytest.mark.parametrize(
    "weights",
    [
        {s: 0.5 for s in S if s is not S.TAG_CHARACTERS},
        dict.fromkeys(S, 1.0),
        dict.fromkeys(S, -0.1),
    ],
)
def test_a_profile_weighs_every_signal_within_bounds(
    weights: dict[AuthorshipSignal, float],
) -> None:
    with pytest.raises(ValueError, match="authorship"):
        AuthorshipProfile(weights=weights)


def test_assessing_never_raises() -> None:
    hostile = [
        "\ud800 a lone surrogate " * 40,
        "\x00" * 10_000,
        "\n" * 100_000,
        "- " * 50_000,
        "\u202e" * 1000 + HAND_TYPED,
        "word\u2014" * 20_000,
        "**" * 40_000,
    ]
    for text in hostile:
        reading = ASSESSOR.assess("\ud800", text)
        assert reading.state in set(AuthorshipState)


def test_a_failure_inside_reads_as_not_assessed() -> None:
    class Broken(str):
        def strip(self, chars: str | None = None) -> str:
            raise RuntimeError("broken")

    assert ASSESSOR.assess(None, Broken(HAND_TYPED)) == NOT_ASSESSED


def test_threads_read_what_one_thread_reads() -> None:
    texts = [
        padded(f"{FRAMING}\n{SCAFFOLD}"),
        HAND_TYPED,
        f"x {TAGGED}",
        padded(DASHES),
        "",
    ] * 40
    alone = [ASSESSOR.assess(None, t) for t in texts]
    fresh = MachineAuthorshipAssessor()
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda t: fresh.assess(None, t), texts))
    assert together == alone
