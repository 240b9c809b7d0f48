"""The one rule for what text a value may hold, checked against the Unicode database."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from mailfathom.domain import text_rules, unseen

# The categories a one-line value may not hold: controls (C0, DEL, C1 with NEL), the line
# and paragraph separators, and surrogates.
_REFUSED_CATEGORIES = {"Cc", "Zl", "Zp", "Cs"}
_BIDI_CONTROLS = {*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def test_a_one_line_value_refuses_exactly_the_control_line_and_surrogate_categories() -> None:
    disagreeing = [
        hex(point)
        for point in range(sys.maxunicode + 1)
        if text_rules.has_control_character(chr(point))
        != (unicodedata.category(chr(point)) in _REFUSED_CATEGORIES)
    ]
    assert disagreeing == []


def test_a_name_also_refuses_the_bidirectional_controls_and_nothing_else() -> None:
    disagreeing = [
        hex(point)
        for point in range(sys.maxunicode + 1)
        if text_rules.is_name(chr(point))
        == (unicodedata.category(chr(point)) in _REFUSED_CATEGORIES or chr(point) in _BIDI_CONTROLS)
    ]
    assert disagreeing == []


@pytest.mark.parametrize(
    "text",
    ["Lunch on Thursday", "Grüße à tous", "\U0001f468\u200d\U0001f469\u200d\U0001f467"],
)
def test_ordinary_text_is_one_line_a_name_and_a_body(text: str) -> None:
    assert text_rules.is_one_line(text)
    assert text_rules.is_name(text)
    assert text_rules.is_body_text(text)
    assert text_rules.is_scalar_text(text)


@pytest.mark.parametrize(
    "text",
    ["a\nb", "a\rb", "a\tb", "a\x00b", "a\x7fb", "a\x85b", "a\x9fb", "a\u2028b", "a\u2029b"],
)
def test_breaks_and_controls_are_not_one_line(text: str) -> None:
    assert not text_rules.is_one_line(text)
    assert not text_rules.is_name(text)


@pytest.mark.parametrize("point", [0xD800, 0xDBFF, 0xDC00, 0xDC80, 0xDFFF], ids=hex)
def test_a_lone_surrogate_is_refused_everywhere(point: int) -> None:
    text = f"before{chr(point)}after"
    assert not text_rules.is_scalar_text(text)
    assert not text_rules.is_one_line(text)
    assert not text_rules.is_name(text)
    assert not text_rules.is_body_text(text)


def test_a_body_may_break_lines_but_holds_no_nul() -> None:
    assert text_rules.is_body_text("first line\r\nsecond\tline\u2028third\x0c")
    assert not text_rules.is_body_text("a\x00b")


def test_a_bidirectional_override_is_one_line_but_no_name() -> None:
    assert text_rules.is_one_line("photo\u202egpj.exe")
    assert not text_rules.is_name("photo\u202egpj.exe")


def test_a_shown_name_also_refuses_every_character_that_renders_as_nothing() -> None:
    disagreeing = [
        hex(point)
        for point in range(sys.maxunicode + 1)
        if text_rules.is_shown_name(chr(point))
        == (not text_rules.is_name(chr(point)) or unseen.is_unseen(chr(point)))
    ]
    assert disagreeing == []


@pytest.mark.parametrize(
    "text",
    [
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian: a non-joiner between letters
        "\u0915\u094d\u200d\u0937",  # Devanagari: a joiner after a virama
        "\u0d7b\u0d4d\u200c",  # Malayalam: a non-joiner after a virama
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # an emoji sequence
        "\u2764\ufe0f Notes",  # a variation selector after a symbol
        "\u845b\U000e0100",  # an ideographic variation selector
    ],
)
def test_a_joiner_or_selector_that_does_its_work_may_stand_in_a_shown_name(text: str) -> None:
    """Zero-width joiners and non-joiners where RFC 5892's contextual rules allow them (the
    scripts that need them), between pictographs, and variation selectors after a character
    other than ASCII: each changes how its neighbours are drawn, as these scripts and
    sequences require."""
    assert text_rules.is_shown_name(text)


@pytest.mark.parametrize(
    "text",
    [
        "IN\u200bBOX",
        "Gar\u2060den",
        "\ufeffGarden",
        "Garden\ufe0f",
        "\u3164",
        "IN\u200dBOX",
        "IN\u200cBOX",
        "\u200dInbox",
        "Inbox\u200c",
        "\ufe0fInbox",
        "\U0001f468\u200d",
        "\u0645\u200c\u200c\u062e",
    ],
)
def test_a_name_that_may_look_like_another_is_a_name_but_no_shown_name(text: str) -> None:
    assert text_rules.is_name(text)
    assert not text_rules.is_shown_name(text)
    assert text_rules.is_shown_name("Grüße à tous")
