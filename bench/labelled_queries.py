"""The labelled query set (`data/query_set.json`): searches over real mailing-list mail, each
with every message of the collection that answers it, for measuring retrieval quality.

The collection is two folders of the shared corpora, used where they lie and never copied:
SpamAssassin's easy_ham (2,500 messages of 2002: exmh, Red Hat and Irish Linux users, Razor,
SpamAssassin, Spambayes, FoRK and other lists) and the linux-mips archive of 2005 (2,896
messages: kernel patches, toolchains, boards). 5,396 messages in all.

How the set was built. Topics were taken from across both folders (threads of every size,
single messages, patches, questions and their answers, off-topic chatter). For each, the
messages were read, and every message of the collection that meets the need was listed: the
whole thread when the need is the discussion, more than the thread when the same matter came
up elsewhere (found by searching the collection for the matter's own words and reading the
candidates). A relevant message is named by its path under the corpora root.

Each query is recorded with its kind:

- `exact`: words the relevant messages themselves use (a name, a rare term, an error
  message, a phrase). Every content word of the query occurs in at least one relevant
  message (`missing_words` checks it).
- `paraphrase`: the same kind of need in other words. It shares no content word with any
  relevant message: not with its subject, its body as the store indexes it (the plain text,
  or the text of its HTML) or the names and addresses of its participants, after folding
  case, dropping stop words and stemming (`shared_words` checks it mechanically).
- `question`: asked as a person asks ("what did X say about Y?"), so it carries words no
  message has (what, say, anyone) beside ones some do.
- `crosslingual`: a Czech or Slovak query over English mail; like a paraphrase it shares
  no content word with its relevant messages.

The checks run in `tests/reading/test_query_set.py`; `retrieval_quality.py` measures a
retrieval function on the set.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

import snowballstemmer

from mailfathom.adapters.mime import normalize_message

QUERY_SET = Path(__file__).resolve().parent / "data" / "query_set.json"
COLLECTION = ("messages/spamassassin-easy-ham-1", "messages/linux-mips-2005")

# Words that carry no subject matter, in English, Czech and Slovak: a paraphrase may share
# these with a message and still share nothing that a lexical index could match on usefully.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves anyone someone something anything one ever may might must shall us
    a aby ako alebo ale ani asi by bol bola bolo co čo do ho i ja je jeho jej ju k ke ked keď
    kde kdo kto když ku lebo ma mi mu na nad nebo než o od po pod pre pred pri pro proč prečo
    s se si sme so sa ta tak také taký tam to tu už v ve vo z za ze že ktorý ktorá které který
    která jak ako jaký aký mezi medzi
    """.split()
)

_WORD = re.compile(r"[^\W_]+")
_STEMMER = snowballstemmer.stemmer("english")


class Kind(StrEnum):
    EXACT = "exact"
    PARAPHRASE = "paraphrase"
    QUESTION = "question"
    CROSSLINGUAL = "crosslingual"


# Kinds whose queries must share no content word with their relevant messages.
DISJOINT_KINDS = frozenset({Kind.PARAPHRASE, Kind.CROSSLINGUAL})


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    query_id: str
    text: str
    kind: Kind
    relevant: tuple[str, ...]
    note: str


def load(path: Path = QUERY_SET) -> list[LabelledQuery]:
    data = json.loads(path.read_text("utf-8"))
    return [
        LabelledQuery(
            query_id=q["id"],
            text=q["query"],
            kind=Kind(q["kind"]),
            relevant=tuple(q["relevant"]),
            note=q["note"],
        )
        for q in data["queries"]
    ]


def content_words(text: str) -> set[str]:
    """The stems of the words of `text` that are neither stop words nor single characters
    (the `t` of "won't"), case folded."""
    words = (w.casefold() for w in _WORD.findall(text))
    return {_STEMMER.stemWord(w) for w in words if len(w) > 1 and w not in STOP_WORDS}


def source_bytes(corpora: Path, name: str) -> bytes:
    """A message as the import reads it: a SpamAssassin file is a one-message mbox, whose
    `From ` line is the envelope and not part of the message."""
    raw = (corpora / name).read_bytes()
    if raw.startswith(b"From "):
        raw = raw.split(b"\n", 1)[1]
    return raw


def indexed_text(raw: bytes) -> str:
    """What the lexical index holds of a message: subject, participants (names, addresses
    and the words of addresses) and plain body."""
    message = normalize_message(raw)
    people = " ".join(f"{p.display_name or ''} {p.address}" for p in message.participants)
    return "\n".join((message.subject or "", people, message.plain_text))


@cache
def _message_words(corpora: Path, name: str) -> frozenset[str]:
    return frozenset(content_words(indexed_text(source_bytes(corpora, name))))


def shared_words(query: LabelledQuery, corpora: Path) -> set[str]:
    """The content words (stems) the query shares with any of its relevant messages."""
    mine = content_words(query.text)
    found: set[str] = set()
    for name in query.relevant:
        found |= mine & _message_words(corpora, name)
    return found


def missing_words(query: LabelledQuery, corpora: Path) -> set[str]:
    """The content words (stems) of the query that no relevant message holds."""
    held: set[str] = set()
    for name in query.relevant:
        held |= _message_words(corpora, name)
    return content_words(query.text) - held


def message_ids(corpora: Path, names: Iterable[str]) -> Mapping[str, str]:
    """Each message's Message-ID (without angle brackets, as the store keeps it) to its name:
    how a stored email is traced back to its file. Every message of the collection has one,
    and no two share it."""
    found: dict[str, str] = {}
    for name in names:
        message_id = normalize_message(source_bytes(corpora, name)).message_id
        if message_id is None or message_id in found:
            raise ValueError("a message of the collection has no Message-ID of its own")
        found[message_id] = name
    return found


def collection_names(corpora: Path) -> list[str]:
    """Every message of the collection, by name under the corpora root."""
    return [
        f"{folder}/{path.name}"
        for folder in COLLECTION
        for path in sorted((corpora / folder).iterdir())
        if path.is_file()
    ]
