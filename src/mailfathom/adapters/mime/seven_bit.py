"""Transfer encodings for what a composed message carries.

Every message this deployment composes is 7-bit, so a submission server without 8BITMIME
(RFC 6152) accepts it as it is and nothing is re-encoded on the way. A file keeps the
encoding it came with when that is 7-bit safe (RFC 2045 section 6: 7bit, quoted-printable,
base64); otherwise text gets quoted-printable and anything else base64.
"""

from __future__ import annotations

import base64
import binascii
import re

_LONGEST_LINE = 998
_BARE_CR = re.compile(rb"\r(?!\n)")


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
