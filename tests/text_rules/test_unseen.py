"""Characters that render as nothing, written out where a person reads them, checked against
the Unicode database."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from mailfathom.domain import unseen

# The whole class, range by range: bidirectional controls, zero-width characters, tags,
# variation selectors (standard, supplementary, Mongolian).
BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]
ZERO_WIDTH = [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF]
TAGS = list(range(0xE0000, 0xE0080))
VARIATION_SELECTORS = [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x180B, 0x180F]
OTHER_IGNORABLE = [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2065, 0x3164, 0xFFA0, 0xFFF0]


@pytest.mark.parametrize(
    "points",
    [BIDI, ZERO_WIDTH, TAGS, VARIATION_SELECTORS, OTHER_IGNORABLE],
    ids=["bidi", "zero-width", "tags", "variation-selectors", "other-ignorable"],
)
def test_every_character_of_the_class_is_written_as_a_marker_naming_it(
    points: list[int],
) -> None:
    for point in points:
        char = chr(point)
        shown = unseen.marked(f"a{char}b")
        assert char not in shown, hex(point)
        name = unicodedata.name(char, "")
        expected = f"U+{point:04X} {name}" if name else f"U+{point:04X}"
        assert shown == f"a\u27e6{expected}\u27e7b", hex(point)


def test_the_marker_names_the_character() -> None:
    assert unseen.marked("invoice\u202efdp.exe") == (
        "invoice\u27e6U+202E RIGHT-TO-LEFT OVERRIDE\u27e7fdp.exe"
    )
    assert unseen.marked("\x1b[2J") == "\u27e6U+001B\u27e7[2J"
    assert unseen.marked("\U000e0041") == "\u27e6U+E0041 TAG LATIN CAPITAL LETTER A\u27e7"


def test_every_control_format_and_separator_code_point_is_marked_and_none_is_left() -> None:
    points = [
        point
        for point in range(sys.maxunicode + 1)
        if unicodedata.category(chr(point)) in {"Cc", "Cf", "Cs", "Zl", "Zp"}
        and chr(point) not in "\n\t"
    ]
    assert [hex(p) for p in points if not unseen.is_unseen(chr(p))] == []
    shown = unseen.marked("".join(map(chr, points + TAGS + VARIATION_SELECTORS + OTHER_IGNORABLE)))
    assert not unseen.has_unseen(shown)
    assert shown.count("\u27e6") == len(points + TAGS + VARIATION_SELECTORS + OTHER_IGNORABLE)


@pytest.mark.parametrize(
    "text",
    [
        "Lunch on Thursday at noon?\n\tSee you.",
        "Příliš žluťoučký kůň úpěl ďábelské ódy; Ľúbostná báseň.",
        "\u4f1a\u8bae \u0627\u0644\u0633\u0644\u0627\u0645 \u05e9\u05dc\u05d5\u05dd",
        "caf\u0065\u0301 \U0001f600 \u00a0non-breaking",
    ],
)
def test_text_without_such_characters_is_shown_as_it_is(text: str) -> None:
    assert unseen.marked(text) == text


def test_a_line_break_is_a_line_break_and_a_lone_carriage_return_is_marked() -> None:
    assert unseen.marked("one\r\ntwo\nthree") == "one\ntwo\nthree"
    assert unseen.marked("Pay 100\rPay 900") == "Pay 100\u27e6U+000D\u27e7Pay 900"
