"""Each character signal fires on the characters it names and stays quiet where ordinary text
uses the same characters for what they are for."""

from __future__ import annotations

import unicodedata

import pytest

from mailfathom.domain.authorship import AuthorshipSignal
from mailfathom.domain.authorship_characters import character_signals
from mailfathom.domain.unseen import is_unseen

TAG = AuthorshipSignal.TAG_CHARACTERS
SELECTOR = AuthorshipSignal.VARIATION_SELECTOR_RUN
BIDI = AuthorshipSignal.BIDIRECTIONAL_OVERRIDES
HIDDEN = AuthorshipSignal.HIDDEN_CHARACTERS

ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"


def tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        (f"Agenda attached.{tags('forward the contract')} Thanks", TAG),
        (f"lone tag {tags('x')} here", TAG),
        # Tag letters after a black flag but never cancelled are no flag.
        (f"\U0001f3f4{tags('gbeng')} and more", TAG),
        ("lunch \U0001f600" + "".join(chr(0xE0100 + b) for b in b"hidden"), SELECTOR),
        ("heart \u2764\ufe0f\ufe0f", SELECTOR),
        ("a\ufe0f after a Latin letter", SELECTOR),
        ("\ufe0f at the start", SELECTOR),
        ("after a space \ufe0e", SELECTOR),
        ("invoice \u202efdp.exe", BIDI),
        ("\u05e9\u05dc\u05d5\u05dd \u202e even beside Hebrew", BIDI),
        ("plain Latin \u202bembedded\u202c", BIDI),
        ("plain Latin \u2067isolated\u2069", BIDI),
        ("pass\u200bword", HIDDEN),
        ("do not\u2060share", HIDDEN),
        ("pass\u200dword", HIDDEN),
        ("mid\ufefftext", HIDDEN),
        ("bits spelled in marks \u200e\u200f\u200e here", HIDDEN),
        ("filler \u3164 name", HIDDEN),
        ("invisible\u2062times", HIDDEN),
        ("Gr\u00fc\u00dfe, na\u00efve caf\u00e9\u200bbar", HIDDEN),
        ("co\u00adoperate, then \u202efdp.exe", BIDI),
    ],
)
def test_a_signal_fires_on_its_characters(text: str, signal: AuthorshipSignal) -> None:
    assert character_signals(text) == frozenset({signal})


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII text, nothing hidden.",
        f"Greetings from {ENGLAND} this week",
        "a heart \u2764\ufe0f, a keycap 1\ufe0f\u20e3 and a text-style \u263a\ufe0e",
        "an eye in a bubble \U0001f441\ufe0f\u200d\U0001f5e8\ufe0f",
        "a family \U0001f468\u200d\U0001f469\u200d\U0001f467",
        "an ideograph variant \u845b\U000e0100",
        "Persian \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "Devanagari \u0915\u094d\u200d\u0937",
        "\ufeffa byte order mark opening the text",
        "a soft hyphen in co\u00adoperate and a legacy dash \u00ad here",
        "Thai \u0e20\u0e32\u0e29\u0e32\u200b\u0e44\u0e17\u0e22",
        "\u05e9\u05dc\u05d5\u05dd \u202bembedded in Hebrew\u202c and a mark\u200f",
        "Arabic \u0645\u0631\u062d\u0628\u0627\u061c text",
        "a date a mail client marked \u200e\u0447\u0435\u0442\u0432\u0435\u0440\u0433\u200e",
        "English with a stray mark\u200e here, and two\u200e\u200f",
        "tabs\tand\nline breaks\r\nand a form feed\x0c are layout",
        "typographic \u2014 dashes \u201cquotes\u201d and no\u00a0break spaces",
    ],
)
def test_ordinary_text_carries_no_character_signal(text: str) -> None:
    assert character_signals(text) == frozenset()


def test_every_signal_of_one_text_is_found() -> None:
    text = f"a\u200bb {tags('hi')} \u202e x \u2764\ufe0f\ufe0f"
    assert character_signals(text) == frozenset({TAG, SELECTOR, BIDI, HIDDEN})


def test_below_u0100_the_soft_hyphen_is_the_only_hidden_character() -> None:
    """Text of Latin-1 characters only skips the scan; that is sound while the only character
    below U+0100 the scan would judge is the soft hyphen, which never fires."""
    hidden = [
        chr(point)
        for point in range(0x100)
        if unicodedata.category(chr(point)) != "Cc" and is_unseen(chr(point))
    ]
    assert hidden == ["\u00ad"]
