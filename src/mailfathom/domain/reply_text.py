"""The part of a message's plain text its sender wrote, as passages for embedding read it.

A reply carries the mail it answers: quoted line by line (`>`), under an attribution ("On ...
wrote:"), or, as Outlook and many phones send it, unmarked below a header block (`From:`,
`Sent:`, `To:`, `Subject:`) or below an attribution spread over two or three lines. Embedding
that text would place the reply where the answered mail already is, so a search for either
would find both. The rules of `authorship_text.own_text` (quoted lines, one-line attributions,
signature separators, forwarded-message dividers, patches) are applied after two more cuts
that only a reader of whole replies needs:

- an attribution line (`On ...`, `Dne ...`, `Am ...`, `Le ...`) closed by `wrote:` (or its
  Czech, Slovak, German, French forms) within three lines, and followed by text that is not
  quoted line by line: everything from it on is the answered mail;
- a header block of an answered or forwarded mail: a `From:` line (`Od:`, `Von:`, `De:`, bold
  `*From:*` too) followed within four lines by a `Sent:`/`Date:` line and a `To:` or
  `Subject:` line: everything from it on.

A phone's one-line signature ("Sent from my iPhone", "Odesláno z iPhonu") is dropped when it
stands alone on the last line. Checked against the reply fixtures of talon, zapier's and
GitHub's email_reply_parser (tests/passages/test_reply_corpora.py).
"""

from __future__ import annotations

import re

from mailfathom.domain.authorship_text import own_text

_ATTRIBUTION_START = re.compile(
    r"^[ \t]*(?:(?:On|Dne|Am|Le|El|V|W|Il)\b|\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b)[^\n]{0,200}$",
    re.IGNORECASE | re.MULTILINE,
)
_WROTE = re.compile(
    r"(?:wrote|writes|napsal(?:a|\(a\))?|napísal(?:a|\(a\))?|schrieb|a écrit|escribió"
    r"|ha scritto|napisał(?:a|\(a\))?|написал(?:а)?)\s*:\s*$",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"^[ \t]*(?:>|\|[ \t])")


def _header_line(names: str) -> re.Pattern[str]:
    """A header line of a quoted mail as a mail program writes it, bold or not."""
    return re.compile(
        r"^[ \t]*\*{0,2}(?:" + names + r")\*{0,2}[ \t]*:", re.IGNORECASE | re.MULTILINE
    )


_FROM = _header_line("From|Od|Von|De|Da|Van|Från")
_SENT = _header_line("Sent|Date|Odesláno|Odoslané|Datum|Gesendet|Envoyé|Enviado|Inviato|Verzonden")
_TO_OR_SUBJECT = _header_line(
    "To|Subject|Komu|Předmět|Predmet|An|Betreff|À|Objet|Para|Asunto|A|Oggetto"
)
_PHONE_SIGNATURE = re.compile(
    r"\n[ \t]*(?:Sent from my [\w ]+|Sent from [\w ]+ for (?:iOS|Android)|Odesláno z [\w ]+"
    r"|Odoslané z [\w ]+|Von meinem [\w ]+ gesendet|Envoyé de mon [\w ]+)[ \t]*\Z",
    re.IGNORECASE,
)
_LINES_OF_ATTRIBUTION = 3
_LINES_OF_HEADER_BLOCK = 5


def authored_text(plain_text: str, character_limit: int) -> str:
    """What the sender wrote, of the first `character_limit` characters of `plain_text` (see
    the module), line breaks normalized."""
    text = plain_text[:character_limit].replace("\r\n", "\n")
    text = _without_attributions(text)
    text = _before_header_block(text)
    text = own_text(text, character_limit)
    return _PHONE_SIGNATURE.sub("", "\n" + text).strip()


def _without_attributions(text: str) -> str:
    """`text` cut at the first attribution followed by unquoted text, and without the lines
    of those followed by a quote."""
    lines = text.split("\n")
    dropped: set[int] = set()
    for found in _ATTRIBUTION_START.finditer(text):
        first = text.count("\n", 0, found.start())
        last = _attribution_end(lines, first)
        if last is None:
            continue
        following = next((line for line in lines[last + 1 :] if line.strip()), None)
        if following is None or not _QUOTED.match(following):
            lines = lines[:first]
            break
        dropped.update(range(first, last + 1))
    return "\n".join(line for i, line in enumerate(lines) if i not in dropped)


def _attribution_end(lines: list[str], first: int) -> int | None:
    """The line closing an attribution that starts on line `first`, if one does within
    `_LINES_OF_ATTRIBUTION` lines and no blank line."""
    for last in range(first, min(first + _LINES_OF_ATTRIBUTION, len(lines))):
        if last > first and not lines[last].strip():
            return None
        if _WROTE.search(lines[last]):
            return last
    return None


def _before_header_block(text: str) -> str:
    lines = text.split("\n")
    offsets = _line_offsets(lines)
    for found in _FROM.finditer(text):
        first = text.count("\n", 0, found.start())
        block = lines[first + 1 : first + _LINES_OF_HEADER_BLOCK]
        if any(_SENT.match(line) for line in block) and any(
            _TO_OR_SUBJECT.match(line) for line in block
        ):
            return text[: offsets[first]]
    return text


def _line_offsets(lines: list[str]) -> list[int]:
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets
