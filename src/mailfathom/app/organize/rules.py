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


# Characters a folder name never holds: IMAP LIST wildcards (RFC 3501 section 6.3.8), the
# hierarchy delimiters servers commonly use, and the quoting characters of mailbox names.
_NOT_IN_NAMES = frozenset('/\\.*%"')


def folder_name(value: object) -> str:
    """The name of a folder to create: one line of 1 to 256 characters, without surrounding
    space, wildcards or a hierarchy delimiter (a parent is named apart), and without a
    character that renders as nothing."""
    if not isinstance(value, str) or not value.strip():
        raise refuse("createFolder names the new folder in name.")
    if (
        len(value) > MAX_FOLDER_CHARACTERS
        or not text_rules.is_name(value)
        or value != value.strip()
        or any(ch in _NOT_IN_NAMES for ch in value)
    ):
        raise refuse(
            f"A folder name is one line of at most {MAX_FOLDER_CHARACTERS} characters, "
            "without surrounding space and without / \\ . * % or a quotation mark; name its "
            "parent in parent."
        )
    if not text_rules.is_shown_name(value):
        raise refuse(
            "A folder name holds no character that renders as nothing (a zero-width or other "
            "invisible character), which would let it look like another folder's name."
        )
    if value.casefold() == "inbox":
        raise refuse("A folder name is not INBOX, which every account already has.")
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
