"""The style reading agrees with the plain reading of its rules: the author's own text walked
line by line, the whole text folded and split, and every irregularity of hand-typed text
looked for with one expression. The reading itself takes shortcuts (searches that jump from
line break to line break, a byte table, passes that stop once answered); these tests hold
that no shortcut changes an answer, on the generated set, on the corpora and on texts built
from the pieces each shortcut is about."""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from pathlib import Path

import pytest

from authorship.texts import HAND_TYPED
from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.authorship_phrases import PHRASES, distinct_phrases, expand, words
from mailfathom.domain.authorship_style import _hand_typed, _openings_uniform
from mailfathom.domain.authorship_text import STYLE_CHARACTER_LIMIT, own_text

GENERATED = Path(__file__).resolve().parent / "generated"

_QUOTED = re.compile(r"^[ \t]*(?:>|\|[ \t])")
_ATTRIBUTION = re.compile(
    r"(?:wrote|writes|napsal(?:a|\(a\))?|napísal(?:a|\(a\))?|написал|schrieb)\s*:\s*$",
    re.IGNORECASE,
)
_ENDS_OWN_TEXT = re.compile(
    r"^(?:-- ?$|diff |Index: |--- a/|-{3,}\s*(?:Original|Forwarded|Původní|Pôvodná|Přeposlan"
    r"|Preposlan)|_{20,}\s*$|Begin forwarded message)",
    re.IGNORECASE,
)
_APOSTROPHES = re.compile("['\u2019\u02bc]")
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NOT_WORD = re.compile(r"[\W_]+")
_HAND_TYPED = re.compile(
    r"[.!?] {2,}\S"
    r"|[!?]{2,}"
    r"|\.{3}"
    r"|[:;]-?[()DPp](?!\w)"
    r"|[ \t][,.](?!\w)"
    r"|[^\W\d_]{2}[.!?][^\W\d_]"
)
_SENTENCE_OR_LINE = re.compile(r"(?<=[.!?:,])[\"'\u201d\u2019)]*[ \t]+(?=\S)|\n")
_LINE_OPENING = re.compile(r"^(?:[-*\u2022#>]+|\d{1,2}[.)])?[ \t]*\**")


def plain_own_text(plain_text: str) -> str:
    kept: list[str] = []
    for line in plain_text[:STYLE_CHARACTER_LIMIT].replace("\r\n", "\n").split("\n"):
        if _ENDS_OWN_TEXT.match(line):
            break
        if _QUOTED.match(line) or (line.rstrip().endswith(":") and _ATTRIBUTION.search(line)):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def plain_words(text: str) -> list[str]:
    lowered = text.lower()
    if not lowered.isascii():
        lowered = _COMBINING.sub("", unicodedata.normalize("NFKD", lowered))
    return _NOT_WORD.sub(" ", _APOSTROPHES.sub("", lowered)).split()


BY_FIRST_TWO = {
    (sequence[0], sequence[1]): number
    for number, phrase in enumerate(PHRASES)
    for sequence in expand(phrase)
}
SEQUENCES = [expand(phrase) for phrase in PHRASES]


def plain_distinct_phrases(folded: list[str]) -> int:
    """Every entry with a word sequence at any pair of adjacent words that opens one."""
    found: set[int] = set()
    for start, pair in enumerate(itertools.pairwise(folded)):
        if pair in BY_FIRST_TWO:
            found.update(
                number
                for number, sequences in enumerate(SEQUENCES)
                if any(tuple(folded[start : start + len(s)]) == s for s in sequences)
            )
    return len(found)


def plain_openings_uniform(text: str) -> bool:
    sentences = 0
    previous = ""
    for chunk in _SENTENCE_OR_LINE.split(text):
        opening = _LINE_OPENING.sub("", chunk.strip(), count=1)
        if not opening:
            continue
        if opening[0].islower() and not previous.endswith(","):
            return False
        sentences += 1
        previous = chunk.strip()
    return sentences >= 6


PIECES = (
    HAND_TYPED,
    "I hope this email finds you well.",
    "Doufám, že se Vám daří. Neváhejte mě kontaktovat.",
    "Dúfam, že sa máte dobre — ďakujem za Váš čas.",
    "Please don't hesitate to reach out. I would be glad to help, rest assured.",
    "Thank you for reaching out; thank you for reaching out again.",
    "don't, don\u2019t, donʼt, ﬁnal ｆｕｌｌ ＷＩＤＴＨ, İstanbul, ΣΟΦΟΣ, søren_x, naïve-café",
    "> quoted line",
    "| table line",
    "|no space after the bar",
    "On Monday, Sam wrote:",
    "Jan Novák napsal(a):  ",
    "Note:",
    "a colon: inside",
    "-- ",
    "--",
    "--- a/setup.py",
    "---Original Message---",
    "---\nOriginal",
    "-----Forwarded message-----",
    "_" * 25,
    "_" * 25 + "\u00a0 ",
    "_" * 25 + " x",
    "diff --git a/x b/x",
    "INDEX: notes",
    "Begin forwarded message:",
    "- Budget: twelve",
    "1. Scope",
    "2) Plan:",
    "**Design:** done",
    "## Heading",
    "Two spaces.  After.",
    "Really!! Sure?? Why?!",
    "Wait... then",
    "Smile :) or ;-P",
    "A space , before . stops",
    "Run.Into the next",
    "e.g. www.example.org",
    "Sentences open. With capitals. Every one.",
    "lower case after a full stop. and on",
    "Dobrý den,\nposílám podklady.",
    "em\u2014dash\u2014twice",
    "\r\n",
    "\n\n",
    "\t",
)


def built_texts(count: int) -> list[str]:
    rng = random.Random(28)
    joins = ("\n", " ", "\r\n", "\n\n", "")
    return [
        "".join(rng.choice(PIECES) + rng.choice(joins) for _ in range(rng.randint(1, 30)))
        for _ in range(count)
    ]


def generated_texts() -> list[str]:
    return [normalize_message(p.read_bytes()).plain_text for p in sorted(GENERATED.glob("*.eml"))]


def agree(texts: list[str]) -> None:
    for text in texts:
        own = own_text(text)
        assert own == plain_own_text(text), text
        folded = plain_words(own)
        assert [w.decode() for w in words(own)] == folded, own
        assert distinct_phrases(words(own)) == plain_distinct_phrases(folded), own
        assert _openings_uniform(own) == plain_openings_uniform(own), own
        assert _hand_typed(own) == (_HAND_TYPED.search(own) is not None), own


def test_the_generated_set_reads_as_the_plain_reading_does() -> None:
    agree(generated_texts())


def test_built_texts_read_as_the_plain_reading_does() -> None:
    agree(built_texts(3000))


@pytest.mark.corpus
def test_the_corpora_read_as_the_plain_reading_does(corpora: Path) -> None:
    folders = ("linux-mips-2005", "spamassassin-easy-ham-1", "spamassassin-spam-1")
    texts = [
        normalize_message(path.read_bytes()).plain_text
        for folder in folders
        for path in sorted((corpora / "messages" / folder).iterdir())
        if path.is_file()
    ]
    assert len(texts) > 5000
    agree(texts)
