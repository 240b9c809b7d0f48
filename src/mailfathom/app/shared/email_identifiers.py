"""Reading the identifiers a caller names: stored emails and conversations.

A text that is blank, longer than any spelling of a UUID, not a UUID, or the all-zero UUID
names nothing this system issues; it is refused before anything is looked up, and the refusal
never repeats it or says where in a list it stood.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_EMAILS_PER_READ = 10
_LONGEST_UUID_SPELLING = len("urn:uuid:") + 36


def parse_identifier(value: object, code: Code, what: str) -> uuid.UUID:
    refusal = Refusal(code, f"The {what} is not an identifier this system issues.")
    if not isinstance(value, str) or len(value) > _LONGEST_UUID_SPELLING or not value.strip():
        raise refusal
    try:
        parsed = uuid.UUID(value.strip())
    except ValueError as exc:
        raise refusal from exc
    if parsed.int == 0:
        raise refusal
    return parsed


def parse_email_list(values: Iterable[object]) -> list[uuid.UUID]:
    """1 to 10 distinct stored-email identifiers, counted before any is parsed."""
    taken: list[object] = []
    for value in values:
        if len(taken) == MAX_EMAILS_PER_READ:
            raise _count_refusal()
        taken.append(value)
    if not taken:
        raise _count_refusal()
    parsed: list[uuid.UUID] = []
    for value in taken:
        identifier = parse_identifier(value, Code.NOT_AN_EMAIL_IDENTIFIER, "stored email id")
        if identifier in parsed:
            raise Refusal(Code.EMAIL_NAMED_TWICE, "The call names the same email more than once.")
        parsed.append(identifier)
    return parsed


def _count_refusal() -> Refusal:
    return Refusal(
        Code.EMAIL_COUNT_OUT_OF_RANGE,
        f"A content read names from 1 to {MAX_EMAILS_PER_READ} emails.",
    )
