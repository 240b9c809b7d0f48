"""Transfer encodings for what a composed message carries, and a carried message made 7-bit.

Every message this deployment composes is 7-bit, so a submission server without 8BITMIME
(RFC 6152) accepts it as it is and nothing is re-encoded on the way. A file keeps the
encoding it came with when that is 7-bit safe (RFC 2045 section 6: 7bit, quoted-printable,
base64); otherwise text gets quoted-printable and anything else base64.

An attached message (message/rfc822) may not be encoded at all (RFC 2046 section 5.2.1), so
one written with 8-bit octets is itself made 7-bit the way a relay downgrading for a server
without 8BITMIME would: each of its parts keeps its type, parameters and content, and only
a part whose body is not 7-bit gets quoted-printable or base64; header text in 8-bit octets
(RFC 6532 UTF-8) becomes RFC 2047 encoded words. A message that is 7-bit already is carried
as written.
"""

from __future__ import annotations

import base64
import binascii
import re
from email import message_from_bytes, policy
from email.message import EmailMessage, Message

# Parsing and writing a carried message: its header lines are kept as they were written.
CARRIED = policy.SMTP.clone(cte_type="7bit", refold_source="none")

_SEVEN_BIT_SAFE = ("7bit", "quoted-printable", "base64")
_LONGEST_LINE = 998
_BARE_CR = re.compile(rb"\r(?!\n)")
_FOLD = re.compile(r"\r?\n(?=[ \t])")


def is_seven_bit(data: bytes) -> bool:
    """RFC 2045 section 2.7: US-ASCII without NUL, CR only before LF, lines of at most 998
    octets."""
    return (
        data.isascii()
        and b"\x00" not in data
        and _BARE_CR.search(data) is None
        and all(len(line) <= _LONGEST_LINE for line in data.replace(b"\r\n", b"\n").split(b"\n"))
    )


def encoded(data: bytes, maintype: str, original: str | None) -> tuple[str, str]:
    """(body, transfer encoding) for octets that go out as one part, keeping `original` when
    it is 7-bit safe and fits the octets."""
    if original in ("quoted-printable", "base64"):
        chosen = original
    elif is_seven_bit(data):
        chosen = "7bit"
    else:
        chosen = "quoted-printable" if maintype == "text" else "base64"
    if chosen == "base64":
        return base64.encodebytes(data).decode("ascii"), chosen
    if chosen == "quoted-printable":
        # Text keeps its line breaks as line breaks (RFC 2045 section 6.7, rule 4).
        text = maintype == "text"
        return binascii.b2a_qp(data, quotetabs=not text, istext=text).decode("ascii"), chosen
    return data.decode("ascii"), chosen


def carried_message(raw: bytes) -> EmailMessage:
    """The message `raw` as a message/rfc822 part carries it, 7-bit throughout."""
    message = message_from_bytes(raw, policy=CARRIED)
    assert isinstance(message, EmailMessage)
    for part in message.walk():
        _headers(part)
        if part.is_multipart():
            _container(part)
        else:
            _body(part)
    return message


def _body(part: Message) -> None:
    written = part.get_payload()
    if not isinstance(written, str):
        return
    original = str(part.get("content-transfer-encoding", "")).strip().lower() or None
    # Octets outside ASCII read back as replacement characters here.
    clean = written.isascii() and is_seven_bit(written.encode("ascii"))
    if clean and original in (None, *_SEVEN_BIT_SAFE):
        return
    # The octets as written for 7bit, 8bit and binary; decoded for the other two.
    decoded = part.get_payload(decode=True)
    data = decoded if isinstance(decoded, bytes) else b""
    body, chosen = encoded(data, part.get_content_maintype(), original)
    part.set_payload(body)
    _set_transfer_encoding(part, chosen)


def _container(part: Message) -> None:
    """A multipart or an encapsulated message: 7-bit once its parts are."""
    if str(part.get("content-transfer-encoding", "7bit")).strip().lower() != "7bit":
        _set_transfer_encoding(part, "7bit")
    for edge in ("preamble", "epilogue"):
        text = getattr(part, edge)
        if text is not None and not text.isascii():
            setattr(part, edge, None)


def _set_transfer_encoding(part: Message, name: str) -> None:
    if "content-transfer-encoding" in part:
        part.replace_header("Content-Transfer-Encoding", name)
    else:
        part["Content-Transfer-Encoding"] = name


def _headers(part: Message) -> None:
    """Header text written in 8-bit octets, re-read as UTF-8 where it is, so that it is
    written out as encoded words; every field stays where it was."""
    fields = list(part.raw_items())
    if all(value.isascii() for _, value in fields):
        return
    for name in {name.lower() for name, _ in fields}:
        del part[name]
    for name, value in fields:
        part.set_raw(name, _readable(name, value))


def _readable(name: str, value: str) -> str:
    """A header object (a `str`) that writes itself as encoded words, or the value as it
    was."""
    if value.isascii():
        return value
    try:
        text = value.encode("ascii", "surrogateescape").decode("utf-8")
    except (UnicodeDecodeError, UnicodeEncodeError):
        # Not UTF-8: the writer encodes the octets as they are (charset unknown-8bit).
        return value
    header: str = CARRIED.header_factory(name, _FOLD.sub("", text))
    return header
