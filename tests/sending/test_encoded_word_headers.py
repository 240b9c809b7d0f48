"""Text that looks like an RFC 2047 encoded word reaches the reader as it was written.

The text of a header (a caller's subject, a display name, a stranger's subject, address or file
name copied into a reply or a forward, a message identifier) may hold `=?charset?b?...?=`. A
reader decodes such a word; so does the standard library when it is handed the text. Decoded
by the composer and written out, a line break hidden in it would be header lines nobody wrote.
Each case here hides `Bcc:` and `X-Injected:` lines in one field, then reads the message back:
the header lines as they are (no line gained), and the field as an RFC 2047 reader decodes it
(`email.header`; the standard library's address parser parts adjacent encoded words with a
space, which RFC 2047 section 6.2 says a reader drops). A parameter is read as RFC 2231
says, without looking for encoded words (RFC 2047 section 5 allows none there)."""

from __future__ import annotations

import base64
import dataclasses
from email import message_from_bytes, policy
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.utils import collapse_rfc2231_value
from typing import Any

import pytest

from mailfathom.adapters.mime.compose import StdlibComposer
from mailfathom.adapters.mime.literal_headers import check_written
from mailfathom.adapters.mime.seven_bit import CARRIED
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.app.shared.files import Attachment

HIDDEN = "x\r\nBcc: evil@example.com\r\nX-Injected: yes"
WORD = "=?utf-8?b?" + base64.b64encode(HIDDEN.encode()).decode() + "?="
QWORD = "=?us-ascii?q?x=0D=0AX-Injected:_yes?="

MESSAGE = AuthoredMessage(
    from_address="me@example.org",
    from_name="Me",
    to=("friend@example.net",),
    cc=(),
    subject="Minutes",
    plain_text="Attached below.\n",
    html=None,
)
FILE = Attachment("notes.txt", "text/plain", b"notes\r\n")
MESSAGE_FILE = b"From: a@example.net\r\nSubject: notes\r\n\r\nnotes\r\n"


def _lines(mime: bytes) -> Message:
    """The message's header lines as written, nothing decoded."""
    return message_from_bytes(mime, policy=policy.compat32)


def _names(part: Message) -> list[str]:
    return sorted(name.lower() for name in part)


def _raw(part: Message, name: str) -> str:
    """A header's value unfolded, as written."""
    return " ".join(str(part[name]).split())


def _decoded(text: str) -> str:
    return str(make_header(decode_header(text)))


def _compose(**changes: Any) -> bytes:
    return StdlibComposer().compose(dataclasses.replace(MESSAGE, **changes)).mime


@pytest.mark.parametrize("word", [WORD, QWORD], ids=["base64", "quoted"])
@pytest.mark.parametrize(
    "field", ["subject", "subject_alone", "from_name", "in_reply_to", "references"]
)
def test_a_header_holding_an_encoded_word_is_read_back_as_written(field: str, word: str) -> None:
    cases: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
        "subject": ({"subject": "Re: hi"}, {"subject": f"Re: hi {word} there"}),
        "subject_alone": ({"subject": "hi"}, {"subject": word}),
        "from_name": ({"from_name": "Me"}, {"from_name": f"Me {word}"}),
        "in_reply_to": (
            {"in_reply_to": "<b@example.net>"},
            {"in_reply_to": f"<{word}@example.net>"},
        ),
        "references": (
            {"references": ("<a@example.net>", "<b@example.net>")},
            {"references": ("<a@example.net>", f"<{word}@example.net>")},
        ),
    }
    plain, hostile = cases[field]
    mail = _lines(_compose(**hostile))
    assert _names(mail) == _names(_lines(_compose(**plain)))
    message = dataclasses.replace(MESSAGE, **hostile)
    assert _decoded(str(mail["Subject"])) == message.subject
    phrase, _, address = _raw(mail, "From").rpartition(" ")
    assert (_decoded(phrase), address) == (message.from_name, "<me@example.org>")
    if field == "in_reply_to":
        assert _raw(mail, "In-Reply-To") == message.in_reply_to
    if field == "references":
        assert _raw(mail, "References") == " ".join(message.references)


def test_addresses_spelled_like_encoded_words_are_written_as_given() -> None:
    """`=?...?=` is a valid local part: every character of it is atext."""
    to = (f"{WORD}@example.net", "friend@example.net")
    cc = (f"{QWORD}@example.org",)
    mail = _lines(_compose(to=to, cc=cc))
    assert _names(mail) == _names(_lines(_compose(cc=("a@example.org",))))
    assert _raw(mail, "To") == ", ".join(to)
    assert _raw(mail, "Cc") == ", ".join(cc)


@pytest.mark.parametrize(
    "changes",
    [
        {"file_name": f"notes {WORD}.txt"},
        {"file_name": WORD},
        {"parameters": (("charset", WORD),)},
        {"parameters": (("format", f"flowed {QWORD}"),)},
        {"parameters": (("name", WORD),)},
        {"file_name": WORD, "media_type": "message/rfc822", "content": MESSAGE_FILE},
        {
            "file_name": WORD,
            "media_type": "message/rfc822",
            "content": MESSAGE_FILE,
            "parameters": (("name", "fwd.eml"), ("x-note", WORD)),
        },
    ],
    ids=[
        "file-name",
        "file-name-alone",
        "charset",
        "other-parameter",
        "name-parameter",
        "message-file-name",
        "message-parameters",
    ],
)
def test_a_file_part_holding_an_encoded_word_gains_no_header(changes: dict[str, Any]) -> None:
    attachment = dataclasses.replace(FILE, **changes)
    mime = _compose(attachments=(attachment,))
    mail = _lines(mime)
    assert _names(mail) == _names(_lines(_compose(attachments=(FILE,))))
    (part,) = [p for p in mail.walk() if p.get_content_disposition() == "attachment"]
    twin = dataclasses.replace(attachment, file_name="notes.txt", parameters=())
    (plain,) = [
        p
        for p in _lines(_compose(attachments=(twin,))).walk()
        if p.get_content_disposition() == "attachment"
    ]
    assert _names(part) == _names(plain)
    if attachment.media_type == "text/plain":
        assert part.get_payload(decode=True) == b"notes\r\n"
    for header, name in (("content-disposition", "filename"), ("content-type", "name")):
        written = part.get_param(name, header=header)
        if written is not None:
            assert collapse_rfc2231_value(written) == attachment.file_name


@pytest.mark.parametrize("nested", [False, True], ids=["top", "part"])
def test_the_last_check_refuses_a_header_written_over_several_lines(nested: bool) -> None:
    """What the standard library writes when it is handed an encoded word (the mistake the
    cases above guard against), caught before the message leaves."""
    mail = EmailMessage(policy=CARRIED)
    mail["Subject"] = "Minutes"
    mail.set_content("notes")
    check_written(mail)
    if nested:
        mail.add_attachment(b"x", maintype="application", subtype="octet-stream")
        (part,) = mail.iter_attachments()
        part.set_param("x-note", WORD)
    else:
        mail["In-Reply-To"] = f"<{WORD}@example.net>"
    with pytest.raises(ValueError, match="more than one header"):
        check_written(mail)
