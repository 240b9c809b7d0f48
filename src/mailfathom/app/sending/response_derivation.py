"""What a reply or a forward takes from the message it answers: recipients, subject,
threading fields and the quoted text. Nothing here comes from the caller.

RFC 5322 section 3.6.4: a reply's In-Reply-To is the parent's Message-ID, and its References
are the parent's References (or, without them, its In-Reply-To) followed by the parent's
Message-ID. Where the parent's In-Reply-To names several identifiers, the first is taken, as
conversations are linked (`normalize_references`, RFC 5256 section 2.2).
Section 3.6.5: "Re: " is prefixed once; a subject already carrying it is kept.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import datetime

from mailfathom.app.shared.stored_mail import EmailRow, ParticipantRow
from mailfathom.domain.identifiers import normalize_references

_REPLY_PREFIX = re.compile(r"^\s*re\s*:", re.IGNORECASE)
_FORWARD_PREFIX = re.compile(r"^\s*(fwd?|fw)\s*:", re.IGNORECASE)
_QUOTE_CUT = "[…]"


def reply_subject(original: str | None) -> str:
    subject = (original or "").strip()
    return subject if _REPLY_PREFIX.match(subject) else f"Re: {subject}".rstrip()


def forward_subject(original: str | None) -> str:
    subject = (original or "").strip()
    return subject if _FORWARD_PREFIX.match(subject) else f"Fwd: {subject}".rstrip()


def _bracketed(identifier: str) -> str:
    return identifier if identifier.startswith("<") else f"<{identifier}>"


def threading_fields(original: EmailRow) -> tuple[str | None, tuple[str, ...]]:
    """(In-Reply-To, References) for an answer to `original`; none without a Message-ID."""
    message_id = original.summary.message_id
    if not message_id:
        return None, ()
    parent = _bracketed(message_id)
    earlier = normalize_references(original.references, original.in_reply_to, message_id)
    chain = [_bracketed(i) for i in earlier if _bracketed(i) != parent]
    return parent, (*chain, parent)


def _of(people: Sequence[ParticipantRow], role: str) -> list[str]:
    return [p.address for p in people if p.role == role]


def reply_audience(
    original: EmailRow, everyone: bool, own_addresses: Collection[str]
) -> tuple[list[str], list[str]]:
    """(To, Cc) of a reply: whoever asked for answers (Reply-To, else From), and for
    `everyone` the original To and Cc as well, less every address the account receives or
    sends as (`own_addresses`, lower-cased), each address once."""
    people = original.participants
    to = _of(people, "reply-to") or _of(people, "from")
    cc: list[str] = []
    if everyone:
        cc = _of(people, "to") + _of(people, "cc")
    seen: set[str] = set()
    kept_to: list[str] = []
    kept_cc: list[str] = []
    for address, target in [(a, kept_to) for a in to] + [(a, kept_cc) for a in cc]:
        key = address.lower()
        if key in seen or (target is kept_cc and key in own_addresses):
            continue
        seen.add(key)
        target.append(address)
    return kept_to, kept_cc


def _author(original: EmailRow) -> str:
    sender = next((p for p in original.participants if p.role == "from"), None)
    if sender is None:
        return "an unknown sender"
    return f"{sender.display_name} <{sender.address}>" if sender.display_name else sender.address


def _date(value: datetime | None) -> str:
    return value.strftime("%a, %d %b %Y %H:%M %z") if value is not None else "an unknown date"


def _bounded(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    return text[: max(0, room - len(_QUOTE_CUT) - 1)] + "\n" + _QUOTE_CUT


def reply_text(caller_text: str, original: EmailRow, max_characters: int) -> str:
    """What the caller wrote, then the original quoted line by line, the quotation cut to fit
    the body bound (the caller's own text is never cut)."""
    lead = f"\n\nOn {_date(original.summary.sent_at)}, {_author(original)} wrote:\n"
    quoted = "\n".join("> " + line for line in (original.plain_text or "").splitlines())
    room = max_characters - len(caller_text) - len(lead)
    return caller_text + lead + _bounded(quoted, room)


def forward_text(caller_text: str, original: EmailRow, max_characters: int) -> str:
    people = original.participants
    header = [
        "",
        "",
        "---------- Forwarded message ----------",
        f"From: {_author(original)}",
        f"Date: {_date(original.summary.sent_at)}",
        f"Subject: {original.summary.subject or ''}",
    ]
    if _of(people, "to"):
        header.append("To: " + ", ".join(_of(people, "to")))
    if _of(people, "cc"):
        header.append("Cc: " + ", ".join(_of(people, "cc")))
    lead = "\n".join(header) + "\n\n"
    room = max_characters - len(caller_text) - len(lead)
    return caller_text + lead + _bounded(original.plain_text or "", room)
