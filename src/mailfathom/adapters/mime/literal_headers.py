"""Header values written so that a reader decodes exactly the text given.

The standard library's header classes read a value they are handed as a header a message
carried: an RFC 2047 encoded word in it (`=?utf-8?b?...?=`) is decoded, and the decoded text
is what they write out, line breaks included. The text a message is composed of may hold such
a word: a caller's subject, or a stranger's subject, address or file name copied from a stored
message into a reply or a forward (already decoded once when it was stored). Decoded again here
it would be read as other text than was written, and a line break hidden in it would become
header lines nobody wrote.

So text holding `=?` does not go through those classes: unstructured text and display names
are written as encoded words of their own UTF-8 octets (which a reader decodes to the text
given, once), addresses and message identifiers (ASCII the use case checked) as they are,
folded between items. A file part's parameter holding `=?` is handed over in RFC 2231's
form, which is read without looking for encoded words (it is written back quoted, or in RFC
2231's form where it is long: RFC 2047 section 5 allows no encoded word in a parameter).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from email.header import Header
from email.headerregistry import Address
from email.message import EmailMessage, Message

# Where a reader may find an encoded word.
_MARK = "=?"
_LINE = 78
_CRLF = "\r\n"
# A line break a header is written with that does not continue it (folding white space
# follows a fold), or a lone CR or LF.
_NEW_LINE = re.compile(r"\r\n(?![ \t])|\r(?!\n)|(?<!\r)\n")


def holds_encoded_word(text: str) -> bool:
    return _MARK in text


def _encoded(name: str, text: str) -> str:
    """`text` as encoded words of its UTF-8 octets, folded for a header called `name`."""
    return Header(text, "utf-8", header_name=name).encode(linesep=_CRLF)


def set_text(mail: EmailMessage, name: str, text: str) -> None:
    """An unstructured header (a subject)."""
    if holds_encoded_word(text):
        mail.set_raw(name, _encoded(name, text))
    else:
        mail[name] = text


def set_mailbox(mail: EmailMessage, name: str, display_name: str, address: str) -> None:
    """One mailbox with its display name (the sender)."""
    if holds_encoded_word(display_name) or holds_encoded_word(address):
        phrase = _encoded(name, display_name) if display_name else ""
        mail.set_raw(name, f"{phrase} <{address}>" if phrase else address)
    else:
        local, _, domain = address.rpartition("@")
        mail[name] = Address(display_name=display_name, username=local, domain=domain)


def set_items(mail: EmailMessage, name: str, items: Sequence[str], separator: str) -> None:
    """Plain ASCII items (addresses, bracketed message identifiers), written as they are when
    one holds `=?`, a line folded between two items when it would grow past 78 characters."""
    value = separator.join(items)
    if not any(holds_encoded_word(item) for item in items):
        mail[name] = value
        return
    lines: list[str] = []
    width = len(name) + 2
    for index, item in enumerate(items):
        piece = item if index == len(items) - 1 else item + separator.rstrip()
        if not lines:
            lines.append(piece)
            width += len(piece)
        elif width + 1 + len(piece) > _LINE:
            lines.append(piece)
            width = 1 + len(piece)
        else:
            lines[-1] += " " + piece
            width += 1 + len(piece)
    mail.set_raw(name, (_CRLF + " ").join(lines))


def set_parameter(part: EmailMessage, name: str, value: str, header: str) -> None:
    """A parameter of a part's header, given in RFC 2231's form when it holds `=?`."""
    charset = "utf-8" if holds_encoded_word(value) else None
    part.set_param(name, value, header=header, charset=charset)


def check_written(mail: EmailMessage) -> None:
    """Raises ValueError when a header of the message or of a part it is made of would be
    written over more than one header line: whatever let such a value through, no header
    nobody wrote leaves. A message carried as a file keeps its own lines, as they came."""
    parts: list[Message] = [mail]
    while parts:
        part = parts.pop()
        for name, value in part.raw_items():
            if _NEW_LINE.search(part.policy.fold(name, value).removesuffix(_CRLF)):
                raise ValueError("a header value would be written as more than one header")
        if part.get_content_maintype() == "multipart":
            parts.extend(p for p in part.get_payload() if isinstance(p, Message))
