"""Reading the header fields a stored message needs out of a parsed header block.

Headers are read from the parser's raw values rather than through the stdlib's structured
header objects: those are several times slower and, in Python 3.11, raise on real input
(group syntax in To:, RFC 5322 section 3.4). Each field is decoded here with lenient rules
and a field that cannot be used is recorded as the defect ``header:<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from email.message import Message
from email.utils import getaddresses, parsedate_tz

from mailfathom.adapters.mime.text import (
    ENCODED_WORD,
    decode_encoded_words,
    header_to_unicode,
    single_line,
    unfold,
)
from mailfathom.domain.identifiers import parse_msg_ids
from mailfathom.domain.message import HeaderRole, Participant

_ADDRESS_ROLES = {
    "from": HeaderRole.FROM,
    "sender": HeaderRole.SENDER,
    "reply-to": HeaderRole.REPLY_TO,
    "to": HeaderRole.TO,
    "cc": HeaderRole.CC,
    "bcc": HeaderRole.BCC,
}
_WANTED = frozenset(
    {
        *_ADDRESS_ROLES,
        "subject",
        "date",
        "message-id",
        "in-reply-to",
        "references",
        "list-id",
        "authentication-results",
    }
)
MAX_ADDRESS_HEADER_LENGTH = 100_000
"""Longest address header read (some thousands of recipients); the rest is a defect."""

# RFC 5321 section 4.5.3.1.3 bounds a path at 256 octets; anything far beyond is not an
# address a reply could be sent to.
_MAX_ADDRESS_LENGTH = 512
_ADDRESS_NOISE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")
_ADDRESS_SPECIALS = re.compile(r'[,;:<>@()\[\]"\\]')
_STASHED = re.compile(r"\x00(\d+)\x00")
_LIST_ID = re.compile(r"<([^<>]*)>")


@dataclass(slots=True)
class HeaderFields:
    """The decoded header fields of one message, plus what could not be read."""

    subject: str | None = None
    sent_at: datetime | None = None
    message_id: str | None = None
    in_reply_to: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    participants: tuple[Participant, ...] = ()
    list_id: str | None = None
    authentication_results: tuple[str, ...] = ()
    defects: list[str] = field(default_factory=list)


def read_header_fields(message: Message) -> HeaderFields:
    """Decode the fields of ``message``'s own header block (not those of its parts)."""
    fields = HeaderFields()
    participants: list[Participant] = []
    seen: set[tuple[HeaderRole, str]] = set()
    message_ids: list[str] = []
    in_reply_to: list[str] = []
    references: list[str] = []
    authentication_results: list[str] = []
    bad_headers: list[str] = []
    date_seen = subject_seen = list_id_seen = message_id_seen = False

    for raw_name, raw_value in message.raw_items():
        name = raw_name.strip().lower()
        if name not in _WANTED:
            continue
        value = header_to_unicode(str(raw_value))
        if name in _ADDRESS_ROLES:
            role = _ADDRESS_ROLES[name]
            found, complete = _read_addresses(role, value)
            for participant in found:
                key = (role, participant.address_key)
                if key not in seen:
                    seen.add(key)
                    participants.append(participant)
            if not complete:
                bad_headers.append(name)
        elif name == "subject" and not subject_seen:
            subject_seen = True
            subject, complete = decode_encoded_words(unfold(value))
            fields.subject = single_line(subject)
            if not complete:
                bad_headers.append(name)
        elif name == "date" and not date_seen:
            date_seen = True
            fields.sent_at = read_date(value)
            if fields.sent_at is None:
                bad_headers.append(name)
        elif name == "message-id":
            ids = parse_msg_ids(value)
            if not message_id_seen:
                message_id_seen = True
                if not ids:
                    bad_headers.append(name)
            message_ids.extend(ids)
        elif name == "in-reply-to":
            in_reply_to.extend(parse_msg_ids(value))
        elif name == "references":
            references.extend(parse_msg_ids(value))
        elif name == "list-id" and not list_id_seen:
            list_id_seen = True
            fields.list_id = _read_list_id(value)
        elif name == "authentication-results":
            authentication_results.append(single_line(unfold(value)))

    fields.participants = tuple(participants)
    fields.message_id = message_ids[0] if message_ids else None
    fields.in_reply_to = tuple(in_reply_to)
    fields.references = _distinct_references(references, fields.message_id)
    fields.authentication_results = tuple(authentication_results)
    fields.defects = [f"header:{name}" for name in dict.fromkeys(bad_headers)]
    return fields


def read_date(value: str) -> datetime | None:
    """The instant of an RFC 5322 section 3.3 date, or None when it cannot be read.

    A date without a zone, or with ``-0000`` (section 3.3: no information about the local
    zone), is taken as UTC so that every stored instant is comparable.
    """
    try:
        parsed = parsedate_tz(unfold(value))
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    year, month, day, hour, minute, second = parsed[:6]
    offset = parsed[9] or 0
    try:
        zone = UTC if offset == 0 else timezone(timedelta(seconds=offset))
        # A leap second (section 3.3 allows 60) has no datetime representation.
        return datetime(year, month, day, hour, minute, min(second, 59), tzinfo=zone)
    except (ValueError, OverflowError, TypeError):
        return None


def _read_addresses(role: HeaderRole, value: str) -> tuple[list[Participant], bool]:
    """Participants of one address header; the flag is False if anything was left out.

    Group syntax (RFC 5322 section 3.4) contributes its members; the group's display name
    names no mailbox and is not kept. Display names are phrases, so encoded words in them
    are decoded (RFC 2047 section 5).
    """
    text = unfold(value)
    complete = True
    if len(text) > MAX_ADDRESS_HEADER_LENGTH:
        cut = text.rfind(",", 0, MAX_ADDRESS_HEADER_LENGTH)
        text = text[: cut if cut > 0 else MAX_ADDRESS_HEADER_LENGTH]
        complete = False
    text, stashed = _stash_encoded_words(text)
    try:
        pairs = getaddresses([text])
    except Exception:
        return [], False
    found: list[Participant] = []
    for raw_display, raw_address in pairs:
        if not raw_display and not raw_address:
            continue
        address = _ADDRESS_NOISE.sub("", raw_address)
        local, at, domain = address.rpartition("@")
        if not at or not local or not domain or len(address) > _MAX_ADDRESS_LENGTH:
            complete = False
            continue
        if stashed:
            raw_display = _unstash(raw_display, stashed)
        display, _ = decode_encoded_words(raw_display)
        found.append(Participant(role, address, single_line(display) or None))
    return found, complete


def _stash_encoded_words(text: str) -> tuple[str, list[str]]:
    """Hide encoded words that contain address delimiters from the address parser.

    RFC 2047 section 5 forbids such characters in an encoded word inside a phrase, but
    senders write ``=?utf-8?Q?Doe,_John?=``; replaced by an opaque token, the word stays
    one piece of the display name.
    """
    if "=?" not in text:
        return text, []
    stashed: list[str] = []

    def stash(match: re.Match[str]) -> str:
        word = match.group(0)
        if not _ADDRESS_SPECIALS.search(word):
            return word
        stashed.append(word)
        return f"\x00{len(stashed) - 1}\x00"

    return ENCODED_WORD.sub(stash, text), stashed


def _unstash(text: str, stashed: list[str]) -> str:
    def restore(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return stashed[index] if index < len(stashed) else ""

    return _STASHED.sub(restore, text)


def _read_list_id(value: str) -> str | None:
    """The list identifier of RFC 2919 section 3, without its angle brackets."""
    text = single_line(unfold(value))
    matches = _LIST_ID.findall(text)
    if matches:
        return matches[-1].strip() or None
    if text and " " not in text and "." in text:
        return text
    return None


def _distinct_references(references: list[str], own_id: str | None) -> tuple[str, ...]:
    unique = dict.fromkeys(references)
    if own_id is not None:
        unique.pop(own_id, None)
    return tuple(unique)
