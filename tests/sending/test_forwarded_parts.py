"""What a forward carries of the original's parts, as a receiving program reads it: the
received bytes parsed by the standard library's `email` package (default policy).

An attached message (message/rfc822) goes out in a transfer encoding RFC 2046 section 5.2.1
allows, so the receiver finds a message inside; an attached file keeps every Content-Type
parameter it had (charset above all) and its transfer encoding where that is 7-bit safe.
"""

from __future__ import annotations

from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage, Message
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.sending.forward_email import ForwardRequest
from servers.smtp import SmtpServer

from .helpers import (
    AGENT,
    SMTP_PASSWORD,
    SMTP_USER,
    SendingDeployment,
    deliver_and_read,
    open_deployment,
    stored,
)

OUTER_SUBJECT = "Minutes you asked for"
INNER_SUBJECT = "Minutes of the board meeting"
INNER_TEXT = "Attendance: all five.\nFrom now on the meeting is on Thursdays.\n"
INNER_UTF8_TEXT = "Zażółć gęślą jaźń — the quorum was reached.\n"
CZECH = "Příliš žluťoučký kůň úpěl ďábelské ódy.\n"
CSV = b"name;amount\nalice;12\n"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def deployment(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    smtp.clear()
    register_all(
        [OUTER_SUBJECT, INNER_SUBJECT, INNER_TEXT, INNER_UTF8_TEXT, CZECH, "olga@example.net"]
    )
    yield from open_deployment(tmp_path, smtp, monkeypatch)


def _outer(*attached: EmailMessage) -> bytes:
    m = EmailMessage()
    m["From"] = "Olga <olga@example.net>"
    m["To"] = "me@example.org"
    m["Subject"] = OUTER_SUBJECT
    m["Message-ID"] = "<outer-1@example.net>"
    m.set_content("See the attachment.\n")
    m.make_mixed()
    for part in attached:
        m.attach(part)
    return bytes(m)


def _inner_seven_bit() -> EmailMessage:
    inner = EmailMessage()
    inner["From"] = "Board <board@example.net>"
    inner["To"] = "olga@example.net"
    inner["Subject"] = INNER_SUBJECT
    inner["Message-ID"] = "<inner-1@example.net>"
    inner.set_content(INNER_TEXT)
    inner.add_attachment(CSV, maintype="text", subtype="csv", filename="amounts.csv")
    return inner


def _attached_message(inner: EmailMessage) -> EmailMessage:
    """A message/rfc822 part carrying `inner` as written (8bit when it is 8-bit)."""
    part = EmailMessage()
    seven_bit = all(octet < 0x80 for octet in inner.as_bytes())
    part.set_content(
        inner, cte="7bit" if seven_bit else "8bit", disposition="attachment", filename="minutes.eml"
    )
    return part


def _forward(d: SendingDeployment, raw: bytes, key: str) -> None:
    d.services.sending().forwards.forward(
        AGENT,
        ForwardRequest(
            stored_email_id=stored(d, raw),
            to=["boss@example.net"],
            plain_text_body="Forwarding.",
            idempotency_key=key,
        ),
    )


def _received(d: SendingDeployment, smtp: SmtpServer) -> tuple[EmailMessage, bytes]:
    _, message = deliver_and_read(d.services, smtp)
    (received,) = smtp.received()
    return message, received.content


def _only_attachment(message: EmailMessage) -> EmailMessage:
    (attachment,) = list(message.iter_attachments())
    assert isinstance(attachment, EmailMessage)
    return attachment


def _plain(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return str(body.get_content()).replace("\r\n", "\n")


def test_a_forwarded_message_arrives_as_a_message_the_receiver_can_read(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    _forward(deployment, _outer(_attached_message(_inner_seven_bit())), "fwd-rfc822")
    message, _ = _received(deployment, smtp)
    attachment = _only_attachment(message)
    assert attachment.get_content_type() == "message/rfc822"
    assert attachment.get("Content-Transfer-Encoding", "7bit").lower() in ("7bit", "8bit")
    assert attachment.get_filename() == "minutes.eml"
    inner = attachment.get_content()
    assert isinstance(inner, EmailMessage)
    assert inner["Subject"] == INNER_SUBJECT
    assert inner["Message-ID"] == "<inner-1@example.net>"
    assert _plain(inner) == INNER_TEXT
    (inner_file,) = list(inner.iter_attachments())
    assert inner_file.get_filename() == "amounts.csv"
    assert inner_file.get_content().replace("\r\n", "\n") == CSV.decode()


def test_a_forwarded_eight_bit_message_goes_out_seven_bit_with_its_text_intact(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    inner = EmailMessage()
    inner["From"] = "Board <board@example.net>"
    inner["Subject"] = INNER_SUBJECT
    inner.set_content(INNER_UTF8_TEXT, cte="8bit")
    inner.add_attachment(CSV, maintype="text", subtype="csv", filename="amounts.csv")
    original = _outer(_attached_message(inner))
    assert any(octet >= 0x80 for octet in original)
    _forward(deployment, original, "fwd-rfc822-8bit")
    message, octets = _received(deployment, smtp)
    # Whatever the submission server offers, the message needs no 8BITMIME.
    assert all(octet < 0x80 for octet in octets)
    attachment = _only_attachment(message)
    assert attachment.get("Content-Transfer-Encoding", "7bit").lower() == "7bit"
    forwarded = attachment.get_content()
    assert isinstance(forwarded, EmailMessage)
    assert forwarded["Subject"] == INNER_SUBJECT
    assert _plain(forwarded) == INNER_UTF8_TEXT
    assert forwarded.get_body(("plain",)).get_content_charset() == "utf-8"  # type: ignore[union-attr]
    # The inner message's own parts keep their encodings: the file stays as it was written.
    (inner_file,) = list(forwarded.iter_attachments())
    inner_parts = inner.get_payload()
    assert isinstance(inner_parts, list)
    written_file = inner_parts[1]
    assert isinstance(written_file, Message)
    assert inner_file["Content-Transfer-Encoding"] == written_file["Content-Transfer-Encoding"]
    assert inner_file.get_content().replace("\r\n", "\n") == CSV.decode()


def _text_file(text: str, charset: str, cte: str) -> EmailMessage:
    part = EmailMessage()
    part.set_content(text, charset=charset, cte=cte)
    part.set_param("format", "flowed")
    part.set_param("name", "notes.txt")
    part["Content-Disposition"] = 'attachment; filename="notes.txt"'
    return part


@pytest.mark.parametrize("cte", ["quoted-printable", "base64"])
def test_a_forwarded_text_file_keeps_its_charset_parameters_and_encoding(
    deployment: SendingDeployment, smtp: SmtpServer, cte: str
) -> None:
    _forward(deployment, _outer(_text_file(CZECH, "iso-8859-2", cte)), f"fwd-text-{cte}")
    message, _ = _received(deployment, smtp)
    attachment = _only_attachment(message)
    assert attachment.get_content_type() == "text/plain"
    assert attachment.get_content_charset() == "iso-8859-2"
    assert attachment.get_param("format") == "flowed"
    assert attachment.get_param("name") == "notes.txt"
    assert attachment.get_filename() == "notes.txt"
    assert attachment["Content-Transfer-Encoding"] == cte
    assert attachment.get_content().replace("\r\n", "\n") == CZECH


def test_a_forwarded_eight_bit_text_file_gets_a_seven_bit_encoding_and_keeps_its_charset(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    _forward(deployment, _outer(_text_file(CZECH, "iso-8859-2", "8bit")), "fwd-text-8bit")
    message, octets = _received(deployment, smtp)
    assert all(octet < 0x80 for octet in octets)
    attachment = _only_attachment(message)
    assert attachment.get_content_charset() == "iso-8859-2"
    assert attachment.get_param("format") == "flowed"
    assert attachment["Content-Transfer-Encoding"] == "quoted-printable"
    assert attachment.get_content().replace("\r\n", "\n") == CZECH


def test_a_forwarded_seven_bit_text_file_stays_seven_bit(
    deployment: SendingDeployment, smtp: SmtpServer
) -> None:
    _forward(deployment, _outer(_text_file("Plain notes.\n", "us-ascii", "7bit")), "fwd-7bit")
    message, _ = _received(deployment, smtp)
    attachment = _only_attachment(message)
    assert attachment.get_content_charset() == "us-ascii"
    assert attachment["Content-Transfer-Encoding"] == "7bit"
    assert attachment.get_content().replace("\r\n", "\n") == "Plain notes.\n"


# Real mail carrying encapsulated messages: delivery reports (a message/delivery-status part
# and the returned message, one of them written in 8bit UTF-8) and a forward.
CORPUS = [
    "parser-fixtures/postal-mime/test/fixtures/bounce.eml",
    "parser-fixtures/nodemailer-mailparser/test/fixtures/delivery-status.eml",
    "parser-fixtures/flanker/tests/fixtures/messages/enclosed.eml",
    "spamassassin-easy-ham-1/01542.ed72bf2cd81ccd4c076533fb0af004e5.txt",
]


def _encapsulated(message: Message) -> list[tuple[str, object]]:
    """(media type, what a reader finds inside) for each encapsulated part, in order: the
    subject, Message-ID and plain text of a message; the fields of a delivery report."""
    found: list[tuple[str, object]] = []
    for part in message.walk():
        media_type = part.get_content_type()
        inside = part.get_payload()
        if media_type == "message/rfc822":
            assert isinstance(inside, list), "no message found inside"
            inner = inside[0]
            assert isinstance(inner, EmailMessage)
            body = inner.get_body(("plain",))
            text = str(body.get_content()).replace("\r\n", "\n") if body is not None else None
            found.append((media_type, (inner["Subject"], inner["Message-ID"], text)))
        elif media_type == "message/delivery-status":
            assert isinstance(inside, list), "no report fields found inside"
            blocks = []
            for block in inside:
                assert isinstance(block, Message), "a report block is not a header block"
                if block_fields := sorted(block.items()):
                    blocks.append(block_fields)
            found.append((media_type, blocks))
    return found


@pytest.mark.parametrize("name", CORPUS)
def test_real_mail_forwards_with_its_attached_messages_readable(
    deployment: SendingDeployment, smtp: SmtpServer, corpora: Path, name: str
) -> None:
    raw = (corpora / "messages" / name).read_bytes()
    original = message_from_bytes(raw, policy=policy.default)
    expected = _encapsulated(original)
    assert expected
    register_all(
        [str(o.get("Subject")) for o in original.walk() if o.get("Subject")]
        + [str(original["From"])]
    )
    _forward(deployment, raw, "fwd-corpus")
    message, octets = _received(deployment, smtp)
    assert all(octet < 0x80 for octet in octets)
    assert _encapsulated(message) == expected
