"""A message's readable text (plain and HTML body), kept in the packs right after its MIME.

The text is what normalization read out of the MIME, so it belongs to the MIME's record: it is
appended in the same write and under the same flush, and the index row of the MIME says how
long it is. Keeping it there rather than in the database spares the database the largest thing
it would otherwise hold (the bodies were three quarters of its bytes, each written to the log
and copied again by the checkpoint).

A text record checks itself with a CRC-32 of its payload instead of a SHA-256: hashing every
body again would cost more than writing it, and damage found on reading is handled like
damaged MIME (a repair request; the repaired text then goes to the database).
"""

from __future__ import annotations

import struct
import zlib

from mailfathom.domain.errors import ContentMissingError

TEXT_MARKER = b"MFT1"
# Marker, CRC-32 of what follows it, whether an HTML body is present, octets of the plain body.
_HEAD = struct.Struct(">4sIBQ")


def storable_text(value: str) -> str:
    """Text as every store keeps it: PostgreSQL refuses NUL in text, so none keeps one, and a
    body reads the same wherever it is kept."""
    return value.replace("\x00", "") if "\x00" in value else value


def encode_text(plain: str, html: str | None) -> tuple[bytes, bytes]:
    """The record, and the plain body's UTF-8 octets (which the record holds too), both
    without NUL characters (see `storable_text`)."""
    plain_octets = storable_text(plain).encode("utf-8", "surrogatepass")
    html_octets = storable_text(html).encode("utf-8", "surrogatepass") if html is not None else b""
    has_html = 1 if html is not None else 0
    crc = zlib.crc32(html_octets, zlib.crc32(plain_octets, zlib.crc32(bytes([has_html]))))
    head = _HEAD.pack(TEXT_MARKER, crc, has_html, len(plain_octets))
    return b"".join((head, plain_octets, html_octets)), plain_octets


def decode_text(record: bytes, *, with_html: bool = True) -> tuple[str, str | None]:
    """(plain, html) out of a record, html None unless `with_html`; `ContentMissingError` when
    it is not an intact one."""
    if not is_text_record(record):
        raise ContentMissingError("The stored text of this email is damaged.")
    _, _, has_html, plain_length = _HEAD.unpack_from(record)
    start = _HEAD.size
    plain = record[start : start + plain_length].decode("utf-8", "surrogatepass")
    if not (has_html and with_html):
        return plain, None
    return plain, record[start + plain_length :].decode("utf-8", "surrogatepass")


def is_text_record(record: bytes) -> bool:
    if len(record) < _HEAD.size or not record.startswith(TEXT_MARKER):
        return False
    _, crc, has_html, plain_length = _HEAD.unpack_from(record)
    if has_html not in (0, 1) or _HEAD.size + plain_length > len(record):
        return False
    view = memoryview(record)
    actual: int = zlib.crc32(view[_HEAD.size :], zlib.crc32(bytes([has_html])))
    return bool(actual == crc)
