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
_COMPLEX_ADDRESS_SYNTAX = re.compile(r'["()\\:;\[\]]')
_NAME_ADDR = re.compile(r"\s*([^<>@]*?)\s*<([^<>\s]*)>\s*")
_BARE_ADDR = re.compile(r"\s*([^<>\s]+)\s*")
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
    reader = _FieldReader()
    for raw_name, raw_value in message.raw_items():
        name = raw_name.strip().lower()
        if name not in _WANTED:
            continue
        try:
            reader.read(name, header_to_unicode(str(raw_value)))
        except Exception:
            reader.bad_headers.append(name)
    return reader.result()


class _FieldReader:
    """Accumulates header fields in written order; the first Subject, Date, List-Id win."""

    def __init__(self) -> None:
        self.fields = HeaderFields()
        self.participants: dict[tuple[HeaderRole, str], Participant] = {}
        self.message_ids: list[str] = []
        self.in_reply_to: list[str] = []
        self.references: list[str] = []
        self.authentication_results: list[str] = []
        self.bad_headers: list[str] = []
        self.seen: set[str] = set()

    def read(self, name: str, value: str) -> None:
        first = name not in self.seen
        self.seen.add(name)
        complete = True
        if name in _ADDRESS_ROLES:
            role = _ADDRESS_ROLES[name]
            found, complete = _read_addresses(role, value)
            for participant in found:
                self.participants.setdefault((role, participant.address_key), participant)
        elif name == "subject" and first:
            subject, complete = decode_encoded_words(unfold(value))
            self.fields.subject = single_line(subject)
        elif name == "date" and first:
            self.fields.sent_at = read_date(value)
            complete = self.fields.sent_at is not None
        elif name == "message-id":
            ids = parse_msg_ids(value)
            complete = bool(ids) or not first
            self.message_ids.extend(ids)
        elif name == "in-reply-to":
            self.in_reply_to.extend(parse_msg_ids(value))
        elif name == "references":
            self.references.extend(parse_msg_ids(value))
        elif name == "list-id" and first:
            self.fields.list_id = _read_list_id(value)
        elif name == "authentication-results":
            self.authentication_results.append(single_line(unfold(value)))
        if not complete:
            self.bad_headers.append(name)

    def result(self) -> HeaderFields:
        fields = self.fields
        fields.participants = tuple(self.participants.values())
        fields.message_id = self.message_ids[0] if self.message_ids else None
        fields.in_reply_to = tuple(self.in_reply_to)
        fields.references = _other_than_own(self.references, fields.message_id)
        fields.authentication_results = tuple(self.authentication_results)
        fields.defects = [f"header:{name}" for name in dict.fromkeys(self.bad_headers)]
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
    pairs = _simple_address_list(text)
    if pairs is None:
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


def _simple_address_list(text: str) -> list[tuple[str, str]] | None:
    """(display name, address) pairs of a list using only the common syntax, else None.

    Most headers are ``Name <addr>`` or bare addresses separated by commas; those are read
    here directly, which is several times faster than the general RFC 5322 section 3.4
    parser. Anything with quoting, comments, groups or routes goes to that parser.
    """
    if _COMPLEX_ADDRESS_SYNTAX.search(text):
        return None
    pairs: list[tuple[str, str]] = []
    for item in text.split(","):
        match = _NAME_ADDR.fullmatch(item)
        if match:
            pairs.append((match.group(1), match.group(2)))
            continue
        match = _BARE_ADDR.fullmatch(item)
        if match:
            pairs.append(("", match.group(1)))
        elif item.strip():
            return None
    return pairs


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


def _other_than_own(references: list[str], own_id: str | None) -> tuple[str, ...]:
    """The References identifiers in the order written, repeats kept, the message's own left
    out: RFC 5256 section 2.2 links them in that order and takes the last as the parent, so
    dropping a repeat could name another parent."""
    return tuple(identifier for identifier in references if identifier != own_id)
