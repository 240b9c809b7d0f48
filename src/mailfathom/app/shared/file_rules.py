"""The rules a caller's words about a file are held to before anything is looked up: a path,
a part of a stored email, a display name, a media type.

A name a file is given (a display name, the new file a save writes, the last component of a
path a file travels under when no display name is given) holds no character that renders as
nothing (`text_rules.is_shown_name`): people are shown it, as an attachment or in a
directory, where nothing writes such a character out.

Every refusal names the argument and the rule, never the value: a path or a file name is
caller input, and it may itself be mail (a name copied from an attachment).
"""

from __future__ import annotations

import re

from mailfathom.domain import text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

# Linux's PATH_MAX and NAME_MAX; a longer path or name could name no file there anyway.
PATH_LIMIT = 4096
NAME_LIMIT = 255
# A part as get_email_content numbers it: IMAP body-section numbers ("2", "1.3").
_PART_ID = re.compile(r"[1-9][0-9]{0,5}(\.[1-9][0-9]{0,5}){0,31}")
# RFC 6838 section 4.2: type "/" subtype, each a restricted-name.
_NAME_CHARS = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_MEDIA_TYPE = re.compile(f"{_NAME_CHARS}/{_NAME_CHARS}")

NOT_SERVED = "No file this deployment lets a tool reach is at that path."


def not_accepted(message: str) -> Refusal:
    return Refusal(Code.FILE_REQUEST_NOT_ACCEPTED, message)


def not_served() -> Refusal:
    """The one answer for a path outside every allowed directory, one that climbs out with
    `..` or through a symbolic link, and one that names nothing or nothing regular: which of
    them it was is not said."""
    return Refusal(Code.FILE_NOT_SERVED, NOT_SERVED)


def file_path(value: object, argument: str) -> str:
    """A path of at most 4096 characters without control characters. Whether it is
    absolute, free of `.` and `..`, and inside an allowed directory is the file roots'
    question, answered by `not_served`."""
    if not isinstance(value, str) or not value.strip():
        raise not_accepted(f"{argument} must be a non-blank path.")
    if len(value) > PATH_LIMIT or text_rules.has_control_character(value):
        raise not_accepted(
            f"{argument} must be at most {PATH_LIMIT} characters, without control characters."
        )
    return value


def shown_name(name: str, argument: str) -> str:
    """`name`, which people are shown as a file's name, when no character of it renders as
    nothing; `argument` says where the name was written."""
    if not text_rules.is_shown_name(name):
        raise not_accepted(
            f"The file name in {argument} holds a character that renders as nothing (a "
            "zero-width, bidirectional or other invisible character)."
        )
    return name


def last_component(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2]


def part_id(value: object, argument: str) -> str:
    if not isinstance(value, str) or _PART_ID.fullmatch(value) is None:
        raise not_accepted(
            f"{argument} must be a part identifier as get_email_content describes it "
            '(numbers joined by dots, such as "2" or "1.3").'
        )
    return value


def display_name(value: object, argument: str) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > NAME_LIMIT
        or not text_rules.is_name(value)
        or "/" in value
    ):
        raise not_accepted(
            f"{argument} must be 1 to {NAME_LIMIT} characters on one line, without control "
            "characters or a slash."
        )
    return shown_name(value, argument)


def media_type(value: object, argument: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or _MEDIA_TYPE.fullmatch(value) is None:
        raise not_accepted(f"{argument} must be a media type written type/subtype.")
    return value.lower()
