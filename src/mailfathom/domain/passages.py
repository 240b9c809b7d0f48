"""A message as the passages its vectors are made from: subject and own text, bounded.

A vector stands for a stretch of text: the longer the stretch, the more its meaning is
averaged away, and the models a profile may name read a bounded input (all-MiniLM-L6-v2 was
trained on 128 word pieces and cuts at 256; multilingual-e5-small at 512). A passage is at
most `PASSAGE_CHARACTERS` characters, about 130 to 200 word pieces of English and more of
Czech or Slovak, so that no model cuts one. Passages are cut at word boundaries, and they do
not overlap (`OVERLAP_CHARACTERS` is 0): on the labelled query set, passages repeating the
last 100 characters of the one before scored lower in every kind of query (recall@10 0.320
against 0.339, MRR@10 0.375 against 0.391) for 2 % more passages, and passages of 400 or
1,600 characters no better than 800 (docs/embeddings-storage.md). A message is scored by its
nearest passage, and every further passage of a long message is one more chance for it to
come near a query it does not answer.

Each passage begins with the subject (reply and forward prefixes taken off), since a passage
from the middle of a message says little of what the message is about without it. Only what
the sender wrote is read (`reply_text.authored_text`: quotes, attributions, signatures and
answered mail left out), and at most `MAX_PASSAGES` passages are made of one message: its
opening, where mail says what it is about. A digest or a long report is found by its start.

Which mail is embedded at all (never junk, never mail whose content is not held) is decided
where messages are read (`app/sync/embedding.py`), not here.
"""

from __future__ import annotations

import re

from mailfathom.domain.reply_text import authored_text

PASSAGE_CHARACTERS = 800
OVERLAP_CHARACTERS = 0
MAX_PASSAGES = 8
SUBJECT_CHARACTERS = 200
# A token longer than this is an encoded blob, a long URL or a line of markup: no model
# reads meaning from it, and it would take a passage's room.
LONGEST_WORD = 48
# How much of a body is read: room for every passage, with space for what is cut away.
_READ_CHARACTERS = MAX_PASSAGES * PASSAGE_CHARACTERS * 2

_REPLY_PREFIX = re.compile(
    r"^(?:\s*(?:re|fwd?|aw|wg|sv|vs|odp|tr|rv|enc)\s*(?:\[\d+\])?\s*:)+\s*", re.IGNORECASE
)


def passages_of(subject: str | None, plain_text: str | None) -> list[str]:
    """The passages of one message, in reading order; none when it has neither subject nor
    text of its own."""
    title = _title(subject)
    words = _words(authored_text(plain_text or "", _READ_CHARACTERS))
    if not words:
        return [title] if title else []
    room = PASSAGE_CHARACTERS - (len(title) + 1 if title else 0)
    return [f"{title}\n{body}" if title else body for body in _windows(words, room)]


def _title(subject: str | None) -> str:
    if not subject:
        return ""
    plain = " ".join(_REPLY_PREFIX.sub("", subject).split())
    return plain[:SUBJECT_CHARACTERS]


def _words(text: str) -> list[str]:
    return [w for w in text.split() if len(w) <= LONGEST_WORD and any(c.isalnum() for c in w)]


def _windows(words: list[str], room: int) -> list[str]:
    """Runs of whole words of at most `room` characters, each repeating about
    `OVERLAP_CHARACTERS` of the previous one, `MAX_PASSAGES` at most."""
    found: list[str] = []
    start = 0
    while start < len(words) and len(found) < MAX_PASSAGES:
        end = start
        used = -1
        while end < len(words) and used + 1 + len(words[end]) <= room:
            used += 1 + len(words[end])
            end += 1
        found.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        back = end
        carried = -1
        while back - 1 > start and carried + 1 + len(words[back - 1]) <= OVERLAP_CHARACTERS:
            carried += 1 + len(words[back - 1])
            back -= 1
        start = back
    return found
