"""The four style signals of the authorship reading: observations a careful writer also
produces, each meaning nothing on its own.

They read only the author's own text (`authorship_text.own_text`), and only when it holds at
least `STYLE_MINIMUM_WORDS` words: below that a stock phrase or a list is as likely to be a
person's as anything, and no style signal is taken at all.

- `formulaicFraming`: two or more different stock openers, transitions or closers of
  generated mail (`authorship_phrases`: English, Czech and Slovak).
- `unspacedEmDashes`: two or more em dashes set straight between two words ("this—and
  that"), the house style of generated English; hand-typed mail writes a hyphen or a spaced
  dash.
- `listScaffolding`: a body laid out as a generated answer is: two or more lines opening with
  a bold (`**...**`) heading, three or more bullet or numbered items each opening with a short
  heading and a colon ("- Budget: ..."), two or more Markdown headings (`#`), or three or more
  numbered short headings each followed by a paragraph of their own.
- `uniformTypography`: typing kept flawless over a whole message, which people rarely
  manage: at least `UNIFORM_MINIMUM_SENTENCES` sentences and lines, every one opening with a
  capital (a line continuing after a comma, as a Czech or Slovak text does after its
  greeting, may open in lower case), and not one of the irregularities of hand-typed text:
  two spaces after a sentence, `!!` or `??`, an ellipsis typed as three dots, an emoticon, a
  space before a comma or a full stop, a sentence run into the next without a space.
  (Sentence lengths were measured too and left out: they vary as much in generated mail as in
  hand-written mail.)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from mailfathom.domain.authorship import AuthorshipSignal
from mailfathom.domain.authorship_phrases import distinct_phrases, words
from mailfathom.domain.authorship_text import STYLE_CHARACTER_LIMIT, holds_words, own_text

STYLE_MINIMUM_WORDS = 50
FRAMING_MINIMUM_PHRASES = 2
EM_DASH_MINIMUM = 2
BOLD_HEADING_MINIMUM = 2
COLON_HEADING_MINIMUM = 3
MARKDOWN_HEADING_MINIMUM = 2
NUMBERED_HEADING_MINIMUM = 3
UNIFORM_MINIMUM_SENTENCES = 6
_HEADING_MAXIMUM_WORDS = 6

_UNSPACED_EM_DASH = re.compile(r"[^\W_]\u2014[^\W_]")
_BULLET = r"(?:[-*\u2022\u2023\u25e6\u25aa\u25cf]|\d{1,2}[.)])"
_BOLD_HEADING = re.compile(rf"^[ \t]*(?:{_BULLET}[ \t]+)?\*\*[^*\n]{{1,80}}\*\*", re.M)
_COLON_HEADING = re.compile(rf"^[ \t]*{_BULLET}[ \t]+([^\W\d_][^:\n]{{0,60}}):[ \t]+\S", re.M)
_MARKDOWN_HEADING = re.compile(r"^#{1,4}[ \t]+\S", re.M)
_NUMBERED = re.compile(r"^[ \t]*\d{1,2}[.)][ \t]+(\S.*)$")
_LIST_ITEM = re.compile(rf"^[ \t]*{_BULLET}[ \t]")
_SENTENCE_OR_LINE = re.compile(r"(?<=[.!?:,])[\"'\u201d\u2019)]*[ \t]+(?=\S)|\n")
_LINE_OPENING = re.compile(r"^(?:[-*\u2022#>]+|\d{1,2}[.)])?[ \t]*\**")
# A list line, searched in the text after a line break put before it (so the search jumps
# from line break to line break): without one there is no colon or numbered heading.
_LIST_LINE = re.compile(rf"\n[ \t]*{_BULLET}[ \t]")
# The irregularities of hand-typed text, each a pattern that opens on a literal or a small
# set of characters, so each is one quick pass in C.
_TWO_SPACES_AFTER_SENTENCE = re.compile(r"[.!?] {2,}\S")
_DOUBLED_MARKS = ("!!", "??", "!?", "?!")
_TYPED_ELLIPSIS = "..."
_EMOTICON = re.compile(r"[:;]-?[()DPp](?!\w)")
_SPACE_BEFORE_STOP = re.compile(r"[ \t][,.](?!\w)")
_SPACES_BEFORE_STOP = (" ,", " .", "\t,", "\t.")
_RUN_IN_SENTENCE = re.compile(r"[.!?](?<=[^\W\d_]{2}[.!?])[^\W\d_]")


def style_signals(
    plain_text: str,
    minimum_words: int = STYLE_MINIMUM_WORDS,
    character_limit: int = STYLE_CHARACTER_LIMIT,
) -> frozenset[AuthorshipSignal] | None:
    """The style signals the author's own text in the first `character_limit` characters of
    `plain_text` carries, or None when that text is too short to read any (fewer than
    `minimum_words` words)."""
    text = own_text(plain_text, character_limit)
    if not holds_words(text, minimum_words):
        return None
    found: set[AuthorshipSignal] = set()
    if distinct_phrases(words(text), enough=FRAMING_MINIMUM_PHRASES) >= FRAMING_MINIMUM_PHRASES:
        found.add(AuthorshipSignal.FORMULAIC_FRAMING)
    if "\u2014" in text and _at_least(_UNSPACED_EM_DASH.finditer(text), EM_DASH_MINIMUM):
        found.add(AuthorshipSignal.UNSPACED_EM_DASHES)
    if _scaffolded(text):
        found.add(AuthorshipSignal.LIST_SCAFFOLDING)
    if _uniform(text):
        found.add(AuthorshipSignal.UNIFORM_TYPOGRAPHY)
    return frozenset(found)


def _at_least(found: Iterable[object], minimum: int) -> bool:
    """Whether `found` yields at least `minimum` items, taking no more than that."""
    return sum(1 for _ in itertools.islice(found, minimum)) >= minimum


def _scaffolded(text: str) -> bool:
    if "**" in text and _at_least(_BOLD_HEADING.finditer(text), BOLD_HEADING_MINIMUM):
        return True
    if "#" in text and _at_least(_MARKDOWN_HEADING.finditer(text), MARKDOWN_HEADING_MINIMUM):
        return True
    if _LIST_LINE.search("\n" + text) is None:
        return False
    colon_headed = (
        match.group(1)
        for match in _COLON_HEADING.finditer(text)
        if _short_heading(match.group(1), final="")
    )
    return _at_least(colon_headed, COLON_HEADING_MINIMUM) or _numbered_headings(text)


def _short_heading(heading: str, *, final: str) -> bool:
    words = heading.split()
    return (
        0 < len(words) <= _HEADING_MAXIMUM_WORDS
        and words[0][0].isupper()
        and not heading.rstrip().endswith(tuple(final))
    )


def _numbered_headings(text: str) -> bool:
    """Three or more numbered short headings, each followed by a line of its own that is not
    itself a list item."""
    lines = [line for line in text.split("\n") if line.strip()]
    count = 0
    for line, following in itertools.pairwise(lines):
        item = _NUMBERED.match(line)
        if (
            item is not None
            and _short_heading(item.group(1), final=".,;:!?")
            and not _LIST_ITEM.match(following)
        ):
            count += 1
    return count >= NUMBERED_HEADING_MINIMUM


def _uniform(text: str) -> bool:
    """Flawless typing: enough sentences and lines, every one opening as it should, and not
    one irregularity of hand-typed text. The openings are read first and one at a time, since
    in hand-typed mail the first line wrapped mid-sentence already answers."""
    return _openings_uniform(text) and not _hand_typed(text)


def _openings_uniform(text: str) -> bool:
    sentences = 0
    previous = ""
    start = 0
    for separator in itertools.chain(_SENTENCE_OR_LINE.finditer(text), (None,)):
        end = len(text) if separator is None else separator.start()
        chunk = text[start:end].strip()
        if separator is not None:
            start = separator.end()
        opening = _LINE_OPENING.sub("", chunk, count=1)
        if not opening:
            continue
        if opening[0].islower() and not previous.endswith(","):
            return False
        sentences += 1
        previous = chunk
    return sentences >= UNIFORM_MINIMUM_SENTENCES


def _hand_typed(text: str) -> bool:
    return (
        ("  " in text and _TWO_SPACES_AFTER_SENTENCE.search(text) is not None)
        or any(marks in text for marks in _DOUBLED_MARKS)
        or _TYPED_ELLIPSIS in text
        or _EMOTICON.search(text) is not None
        or (
            any(stop in text for stop in _SPACES_BEFORE_STOP)
            and _SPACE_BEFORE_STOP.search(text) is not None
        )
        or _RUN_IN_SENTENCE.search(text) is not None
    )
