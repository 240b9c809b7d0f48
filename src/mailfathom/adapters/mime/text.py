"""Turning octets and header values into clean text, whatever the message claims.

Mail arrives with charsets that are missing, misspelt, unknown to Python or simply wrong, and
with 8-bit octets in headers that RFC 5322 says are ASCII. Every function here returns text
and never raises: a label that cannot be honoured falls back to UTF-8 when the octets are
valid UTF-8, else to windows-1252 (which is what most mislabelled Western mail really is),
with replacement characters for what still cannot be decoded. HTML bodies are rendered to
plain text here as well, for the same reader-facing purpose.
"""

from __future__ import annotations

import binascii
import codecs
import re
from functools import lru_cache

from mailfathom.adapters.html.plain_text import render_plain_text

# Labels whose common real-world content is a superset of the named charset (the same
# substitutions the WHATWG Encoding Standard makes for web content), or spellings Python
# does not know.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso_8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "gb2312": "gb18030",
    "gb_2312-80": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "ks_c_5601-1987": "cp949",
    "ks_c_5601": "cp949",
    "euc-kr": "cp949",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "x-sjis": "cp932",
    "sjis": "cp932",
    "big5": "cp950",
    "tis-620": "cp874",
    "windows-874": "cp874",
    "iso-8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
    "x-mac-roman": "mac-roman",
    "macintosh": "mac-roman",
    "unicode-1-1-utf-7": "utf-7",
}
# Text codecs that are not character sets a message can meaningfully use; some of them are
# costly on hostile input.
_REFUSED_CODECS = frozenset({"idna", "punycode", "unicode-escape", "raw-unicode-escape"})

ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?]*)\?=")
"""An RFC 2047 section 2 encoded word (leniently: spaces are tolerated in the text)."""
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/]")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_CONTROL_RUNS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
# Body text keeps tab and line feed; other C0 and C1 controls carry nothing readable and NUL
# cannot be stored in a PostgreSQL text column.
_BODY_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# The same characters as UTF-8: single octets for C0 and DEL, and C2 80 to C2 9F for C1.
_C0_AND_DEL = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
_C1_IN_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")


@lru_cache(maxsize=256)
def codec_for(charset: str | None) -> str | None:
    """Python's codec name for a MIME charset label, or None when it cannot be used.

    ASCII labels also give None: octets labelled us-ascii are very often UTF-8 or
    windows-1252 in practice (RFC 2046 section 4.1.2 makes us-ascii the default), so they
    go through the same detection as unlabelled text.
    """
    if not charset:
        return None
    label = charset.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError):
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    name = info.name.replace("_", "-")
    if name in _REFUSED_CODECS or name == "ascii":
        return None
    return info.name


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode octets with their declared charset, falling back as described above."""
    codec = codec_for(charset)
    if codec is not None:
        try:
            return data.decode(codec)
        except (UnicodeError, LookupError, ValueError):
            try:
                return data.decode(codec, "replace")
            except (UnicodeError, LookupError, ValueError):
                pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def header_to_unicode(value: str) -> str:
    """A raw header value as read by the parser, with its 8-bit octets decoded.

    The parser reads octets as ASCII and keeps anything else as surrogate escapes.
    RFC 6532 allows UTF-8 in header fields; anything else is a guess, and windows-1252 is
    the least surprising one.
    """
    if value.isascii():
        return value
    try:
        data = value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = value.encode("utf-8", "replace")
    return decode_bytes(data, None)


def unfold(value: str) -> str:
    """Remove the line breaks of a folded header (RFC 5322 section 2.2.3)."""
    return _LINE_BREAKS.sub("", value)


def single_line(value: str) -> str:
    """Text fit for a one-line field: no control characters, whitespace collapsed."""
    return " ".join(_CONTROL_RUNS.sub(" ", value).split())


def clean_body_text(text: str) -> str:
    """Body text with line ends made LF and unreadable control characters removed."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not _has_body_controls(text):
        return text
    return _BODY_CONTROLS.sub("", text)


def _has_body_controls(text: str) -> bool:
    """Whether `text` holds a character `_BODY_CONTROLS` removes, found with byte operations
    that run far faster than a character-class scan over a long body."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data.translate(None, _C0_AND_DEL)) != len(data):
        return True
    return not text.isascii() and _C1_IN_UTF8.search(data) is not None


def html_to_text(html: str) -> str:
    """The text a reader sees in an HTML body, laid out as plain text (the rules are in
    `mailfathom.adapters.html.plain_text`)."""
    return clean_body_text(render_plain_text(clean_body_text(html)))


def decode_encoded_words(text: str) -> tuple[str, bool]:
    """Decode RFC 2047 encoded words in header text; returns (text, all_words_decoded).

    Whitespace between two adjacent encoded words is dropped (RFC 2047 section 6.2), and
    adjacent words in the same charset are decoded together so a multi-octet character
    split across words survives. A word that cannot be decoded is kept as written.
    """
    if "=?" not in text:
        return text, True
    pieces: list[str] = []
    pending_charset: str | None = None
    pending = bytearray()
    last_was_word = False
    position = 0
    complete = True

    def flush() -> None:
        nonlocal pending_charset
        if pending_charset is not None:
            pieces.append(decode_bytes(bytes(pending), pending_charset))
            pending.clear()
            pending_charset = None

    for match in ENCODED_WORD.finditer(text):
        between = text[position : match.start()]
        position = match.end()
        if between and not (last_was_word and between.isspace()):
            flush()
            pieces.append(between)
        charset = match.group(1).split("*", 1)[0].lower()
        octets = _decode_word(match.group(2), match.group(3))
        if octets is None:
            flush()
            pieces.append(match.group(0))
            last_was_word = False
            complete = False
            continue
        if charset != pending_charset:
            flush()
            pending_charset = charset
        pending.extend(octets)
        last_was_word = True
    flush()
    pieces.append(text[position:])
    return "".join(pieces), complete


def _decode_word(encoding: str, encoded: str) -> bytes | None:
    try:
        data = encoded.encode("ascii")
    except UnicodeEncodeError:
        return None
    try:
        if encoding in "qQ":
            return binascii.a2b_qp(data, header=True)
        data = data.rstrip(b"=")
        if _NOT_BASE64.search(data) or len(data) % 4 == 1:
            return None
        return binascii.a2b_base64(data + b"=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return None
