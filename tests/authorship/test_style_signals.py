"""Each style signal fires on what it names and stays quiet on the near miss; none is read
on text too short to mean anything, nor on text the author quoted from somebody else."""

from __future__ import annotations

import pytest

from authorship.texts import HAND_TYPED, padded
from mailfathom.domain.authorship import AuthorshipSignal
from mailfathom.domain.authorship_style import STYLE_MINIMUM_WORDS, style_signals

FRAMING = AuthorshipSignal.FORMULAIC_FRAMING
DASHES = AuthorshipSignal.UNSPACED_EM_DASHES
SCAFFOLD = AuthorshipSignal.LIST_SCAFFOLDING
UNIFORM = AuthorshipSignal.UNIFORM_TYPOGRAPHY

FLAWLESS = (
    "Thank you for the update on the migration. The new servers arrived on Monday. "
    "They were installed in the second rack by the facilities team. Monitoring is now "
    "configured for every host. The old machines will be retired next month. Their disks "
    "will be wiped before they leave the building. A final report will follow once the "
    "work is complete and every service has been verified."
)


def test_the_hand_typed_paragraph_carries_nothing() -> None:
    assert style_signals(HAND_TYPED) == frozenset()


@pytest.mark.parametrize(
    "opening",
    [
        "i hope this email finds you well. please don't hesitate to reach out",
        "I hope this email finds you well... Please don\u2019t hesitate to reach out",
        "doufám, že se Vám daří. neváhejte mě kontaktovat",
        "doufam ze se vam dari, nevahejte me kontaktovat",
        "dúfam, že sa máte dobre. v prípade akýchkoľvek otázok",
    ],
)
def test_two_stock_phrases_are_formulaic_framing(opening: str) -> None:
    assert style_signals(padded(opening)) == frozenset({FRAMING})


@pytest.mark.parametrize(
    "opening",
    [
        "i hope this email finds you well",
        "i hope this email finds you well. i hope this email finds you well",
        "i hope this email finds you well. please don't hesitate",
        "doufám, že se Vám daří",
    ],
)
def test_one_stock_phrase_is_not_framing(opening: str) -> None:
    assert style_signals(padded(opening)) == frozenset()


def test_unspaced_em_dashes_fire_from_two() -> None:
    assert style_signals(padded("this\u2014and that\u2014matter")) == frozenset({DASHES})
    assert style_signals(padded("only this\u2014once")) == frozenset()
    assert style_signals(padded("spaced \u2014 twice \u2014 here")) == frozenset()
    assert style_signals(padded("an en dash\u2013twice\u2013here")) == frozenset()


@pytest.mark.parametrize(
    "scaffold",
    [
        "**status:**\n- **design:** done",
        "- **design:** done\n- **build:** half way",
        "- Design: done and approved\n- Build: half way\n* Content: still waiting",
        "1. Budget: agreed\n2. Timeline: slipping\n3. Staffing: fine",
        "## the idea\nsomething\n## how\nsomething else",
        "1. Scope\nwhat we do\n2. Timeline\nwhen we do it\n3. Budget\nwhat it costs",
    ],
)
def test_list_scaffolding_fires(scaffold: str) -> None:
    assert style_signals(padded(scaffold)) == frozenset({SCAFFOLD})


@pytest.mark.parametrize(
    "near_miss",
    [
        "- **design:** done\n- build half way",
        "- Design: done\n- Build: half way",
        "- we should note that the build box is loud: it is\n- also the disk: dying\n"
        "- and the fans that were replaced last week: noisy",
        "# only one heading\nsomething",
        "1. Unpack the tarball.\n2. Run make.\n3. Install the result.",
        "1. Scope\n2. Timeline\n3. Budget",
    ],
)
def test_list_scaffolding_near_misses(near_miss: str) -> None:
    assert style_signals(padded(near_miss)) == frozenset()


def test_flawless_typing_is_uniform_typography() -> None:
    assert style_signals(FLAWLESS) == frozenset({UNIFORM})


@pytest.mark.parametrize(
    "irregular",
    [
        FLAWLESS.replace("Monday. ", "Monday.  "),
        FLAWLESS.replace("Monday.", "Monday!!"),
        FLAWLESS.replace("Monday.", "Monday..."),
        FLAWLESS.replace("Monday.", "Monday :)"),
        FLAWLESS.replace("Monday.", "Monday ."),
        FLAWLESS.replace("Monday. ", "Monday.They"),
        FLAWLESS.replace("They were", "they were"),
        "Short. Only. Five. Flawless. Sentences here and a few more words " * 3,
    ],
)
def test_one_hand_typed_irregularity_is_not_uniform(irregular: str) -> None:
    assert UNIFORM not in (style_signals(irregular) or ())


def test_a_lower_case_line_after_a_greeting_comma_stays_uniform() -> None:
    czech = "Dobrý den, pane Nováku,\n\n" + FLAWLESS.replace("Thank", "thank", 1)
    assert style_signals(czech) == frozenset({UNIFORM})


def test_short_text_gives_no_style_signal() -> None:
    stacked = (
        "**Status:**\n- **Design:** done\u2014approved\u2014and shipped.\n"
        "I hope this email finds you well. Please don't hesitate to reach out."
    )
    assert style_signals(stacked) is None
    assert style_signals(padded(stacked)) == frozenset({FRAMING, DASHES, SCAFFOLD})
    assert style_signals("") is None


def test_the_minimum_counts_words() -> None:
    words = " ".join(["word"] * (STYLE_MINIMUM_WORDS - 1))
    assert style_signals(words) is None
    assert style_signals(f"{words} word") == frozenset()
    numbers = " ".join(["12345 67.89 -- 2026-03-02 | 42"] * STYLE_MINIMUM_WORDS)
    assert style_signals(numbers) is None


def test_quoted_text_signature_and_patch_are_not_read() -> None:
    framing = "I hope this email finds you well. Please don't hesitate to reach out."
    assert style_signals(f"{HAND_TYPED}\n\nOn Monday, Sam wrote:\n> {framing}") == frozenset()
    assert style_signals(f"{HAND_TYPED}\n-- \n{framing}") == frozenset()
    assert style_signals(f"{HAND_TYPED}\ndiff --git a/x b/x\n{framing}") == frozenset()
    assert style_signals(f"{HAND_TYPED}\n-----Original Message-----\n{framing}") == frozenset()
    assert style_signals(f"> {framing}\n> {HAND_TYPED}") is None
