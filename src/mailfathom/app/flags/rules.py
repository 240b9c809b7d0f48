"""The arguments of a flag change, checked before anything is looked up.

Every refusal here is 51012 and names the rule, never the keyword or the request identity.
Lists are counted as sent, before anything normalizes them, so a list of a million keywords is
refused at the 65th entry.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mailfathom.domain.mutations import (
    MutationKind,
    RequestedMutation,
    boolean_value,
    keyword_value,
)

MAX_KEYWORDS = 64
MAX_KEYWORD_CHARACTERS = 64
MAX_REQUEST_ID = 128
# RFC 3501 atom-specials besides CTL and space; "\\" also keeps a system flag out.
_ATOM_SPECIALS = frozenset('(){%*"\\]')
_CHANGES = {
    "add": MutationKind.ADD_KEYWORDS,
    "remove": MutationKind.REMOVE_KEYWORDS,
    "replace": MutationKind.SET_KEYWORDS,
}


def refuse(message: str) -> Refusal:
    return Refusal(Code.FLAG_CHANGE_NOT_ACCEPTED, message)


def request_id(value: object) -> str:
    """The caller's request identity, or one of this deployment's own, new per call."""
    if value is None:
        return "mailfathom:" + uuid.uuid4().hex
    if not isinstance(value, str) or not value.strip():
        raise refuse("The requestId is blank.")
    if len(value) > MAX_REQUEST_ID:
        raise refuse(f"The requestId is longer than {MAX_REQUEST_ID} characters.")
    if not text_rules.is_one_line(value):
        raise refuse("The requestId carries a control character.")
    return value


def _flag(value: object, what: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise refuse(f"{what} is true, false, or left out.")


def _is_atom(word: str) -> bool:
    return bool(word) and all(0x20 < ord(ch) < 0x7F and ch not in _ATOM_SPECIALS for ch in word)


def keywords(values: Iterable[object]) -> frozenset[str]:
    """The keywords named, case-folded; counted as sent, before anything normalizes them."""
    if isinstance(values, (str, bytes)):
        raise refuse("keywords is a list of keywords, not one text.")
    taken: list[object] = []
    for value in values:
        if len(taken) == MAX_KEYWORDS:
            raise refuse(f"keywords names more than {MAX_KEYWORDS} keywords.")
        taken.append(value)
    named: set[str] = set()
    for value in taken:
        if not isinstance(value, str) or len(value) > MAX_KEYWORD_CHARACTERS:
            raise refuse(f"Every keyword is text of at most {MAX_KEYWORD_CHARACTERS} characters.")
        if not _is_atom(value):
            raise refuse("A keyword is not one a mail server could store (an IMAP atom).")
        named.add(value.casefold())
    return frozenset(named)


def requested(
    seen: object,
    flagged: object,
    keyword_change: object,
    named_keywords: Iterable[object] | None,
) -> list[RequestedMutation]:
    """The values a call asks for, in the order seen, flagged, keywords; at least one."""
    asked: list[RequestedMutation] = []
    seen_value = _flag(seen, "seen")
    if seen_value is not None:
        asked.append(RequestedMutation(MutationKind.SET_SEEN, boolean_value(seen_value)))
    flagged_value = _flag(flagged, "flagged")
    if flagged_value is not None:
        asked.append(RequestedMutation(MutationKind.SET_FLAGGED, boolean_value(flagged_value)))
    if (keyword_change is None) != (named_keywords is None):
        raise refuse("keywordChange and keywords are given together or not at all.")
    if keyword_change is not None and named_keywords is not None:
        kind = _CHANGES.get(keyword_change) if isinstance(keyword_change, str) else None
        if kind is None:
            raise refuse("keywordChange is add, remove, or replace.")
        named = keywords(named_keywords)
        if not named and kind is not MutationKind.SET_KEYWORDS:
            raise refuse("An empty keyword list is accepted only with replace.")
        asked.append(RequestedMutation(kind, keyword_value(named)))
    if not asked:
        raise refuse("The call asks for no change: give seen, flagged, or a keyword change.")
    return asked
