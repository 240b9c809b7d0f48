"""The arguments of an organizing call, checked before anything is looked up.

Every refusal here names the rule and never a value: not the folder, the keyword or the
request identity. The keyword and request-identity rules are set_mail_flags' own.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from mailfathom.app.flags import rules as flag_rules
from mailfathom.app.shared.email_identifiers import parse_identifier
from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_EMAILS = 100
MAX_FOLDER_CHARACTERS = 256


def refuse(message: str) -> Refusal:
    return Refusal(Code.ORGANIZE_REQUEST_NOT_ACCEPTED, message)


def _recoded(error: Refusal) -> Refusal:
    return refuse(error.message)


def request_id(value: object) -> str:
    try:
        return flag_rules.request_id(value)
    except Refusal as error:
        raise _recoded(error) from None


def keywords(values: object) -> frozenset[str]:
    if values is None:
        raise refuse("This action names its keywords in keywords.")
    if not isinstance(values, Iterable):
        raise refuse("keywords is a list of keywords.")
    try:
        named = flag_rules.keywords(values)
    except Refusal as error:
        raise _recoded(error) from None
    if not named:
        raise refuse("This action names at least one keyword.")
    return named


def folder(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise refuse("A move names the folder to move to, by its alias.")
    if len(value) > MAX_FOLDER_CHARACTERS or not text_rules.is_one_line(value):
        raise refuse(f"A folder alias is one line of at most {MAX_FOLDER_CHARACTERS} characters.")
    return value


def emails(values: object) -> list[uuid.UUID]:
    """1 to 100 distinct stored email identifiers, counted as sent."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise Refusal(Code.EMAIL_COUNT_OUT_OF_RANGE, "storedEmailIds is a list of identifiers.")
    taken: list[object] = []
    for value in values:
        if len(taken) == MAX_EMAILS:
            raise Refusal(
                Code.EMAIL_COUNT_OUT_OF_RANGE,
                f"storedEmailIds names more than {MAX_EMAILS} emails.",
            )
        taken.append(value)
    if not taken:
        raise Refusal(Code.EMAIL_COUNT_OUT_OF_RANGE, "storedEmailIds names no email.")
    parsed = [parse_identifier(v, Code.NOT_AN_EMAIL_IDENTIFIER, "stored email id") for v in taken]
    if len(set(parsed)) != len(parsed):
        raise Refusal(Code.EMAIL_NAMED_TWICE, "storedEmailIds names one email twice.")
    return parsed
