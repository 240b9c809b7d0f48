"""Composing an outgoing message with the standard library's `email` package.

The policy is SMTP's (CRLF line ends, lines folded at 78) with a 7-bit transfer encoding for
every part: a server that does not offer 8BITMIME accepts it as it is, and no body is ever
re-encoded on the way. Non-ASCII header text becomes RFC 2047 encoded words. A file taken
from a stored message keeps its Content-Type parameters and, where it is 7-bit safe, its
transfer encoding; an attached message is carried unencoded (`seven_bit` says how).

This Python's `email` package does not refuse a line break inside a header value (the fixes
for CVE-2024-6923 came later), and writes a lone surrogate as an `unknown-8bit` encoded word,
so every header value is held here to the same one-line rule the use case applies before it
reaches a header.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email import message_from_string
from email.contentmanager import ContentManager, raw_data_manager
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from mailfathom.adapters.mime import literal_headers as literal
from mailfathom.adapters.mime.seven_bit import CARRIED, carried_message, encoded
from mailfathom.app.sending.ports import AuthoredMessage, ComposedMessage
from mailfathom.app.shared.files import Attachment
from mailfathom.domain import text_rules

# SMTP's policy, 7-bit, and an attached message's own header lines written as they came.
_POLICY = CARRIED


def _header_safe(value: str) -> str:
    if not text_rules.is_one_line(value):
        raise ValueError("a header value carries a line break or a control character")
    return value


class StdlibComposer:
    def compose(self, message: AuthoredMessage) -> ComposedMessage:
        mail = EmailMessage(policy=_POLICY)
        _, _, domain = message.from_address.rpartition("@")
        literal.set_mailbox(
            mail, "From", _header_safe(message.from_name or ""), message.from_address
        )
        if message.to:
            literal.set_items(mail, "To", [_header_safe(a) for a in message.to], ", ")
        if message.cc:
            literal.set_items(mail, "Cc", [_header_safe(a) for a in message.cc], ", ")
        literal.set_text(mail, "Subject", _header_safe(message.subject))
        mail["Date"] = format_datetime(message.sent_at or datetime.now(UTC))
        message_id = _header_safe(message.message_id or make_msgid(domain=domain))
        mail["Message-ID"] = message_id
        if message.in_reply_to is not None:
            literal.set_items(mail, "In-Reply-To", [_header_safe(message.in_reply_to)], " ")
        if message.references:
            literal.set_items(
                mail, "References", [_header_safe(r) for r in message.references], " "
            )
        mail.set_content(message.plain_text)
        if message.html is not None:
            mail.add_alternative(message.html, subtype="html")
        for attachment in message.attachments:
            mail.add_attachment(attachment, content_manager=_FILES)
        literal.check_written(mail)
        return ComposedMessage(message_id=message_id, mime=mail.as_bytes(policy=_POLICY))


def _has_control(text: str) -> bool:
    return any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text)


def _parameters(attachment: Attachment) -> list[tuple[str, str]]:
    """The original part's Content-Type parameters. `name` is the file name as this
    deployment keeps it (the written one may be unsafe); a value no header can carry, or one
    holding an encoded word, is left out."""
    kept = []
    for name, value in attachment.parameters:
        if name == "boundary":
            continue
        if name == "name":
            if attachment.file_name is None:
                continue
            value = attachment.file_name
        elif literal.holds_encoded_word(value):
            # No encoded word belongs in a parameter (RFC 2047 section 5), yet readers decode
            # one there: written, it would be read as other text than the part carried.
            continue
        if not _has_control(name) and not _has_control(value):
            kept.append((name, value))
    return kept


def _set_file(part: EmailMessage, attachment: Attachment) -> None:
    maintype, _, subtype = attachment.media_type.partition("/")
    if not subtype:
        maintype, subtype = "application", "octet-stream"
    parameters = _parameters(attachment)
    if (maintype, subtype) == ("message", "rfc822"):
        # RFC 2046 section 5.2.1: never base64 or quoted-printable.
        raw_data_manager.set_content(
            part,
            carried_message(attachment.content),
            subtype="rfc822",
            cte="7bit",
            disposition="attachment",
        )
        _name_file(part, attachment.file_name, parameters)
        return
    body, transfer_encoding = encoded(attachment.content, maintype, attachment.transfer_encoding)
    media_type = f"{maintype}/{subtype}"
    part["Content-Type"] = media_type
    part["Content-Transfer-Encoding"] = transfer_encoding
    part["Content-Disposition"] = "attachment"
    _name_file(part, attachment.file_name, parameters)
    if maintype == "message":
        # The writer expects the body of a message/* part in the shape the parser gives it
        # (header blocks for a delivery report, a message for the rest), so it is parsed.
        head = f"Content-Type: {media_type}\r\nContent-Transfer-Encoding: {transfer_encoding}"
        entity = message_from_string(f"{head}\r\n\r\n{body}", policy=_POLICY)
        part.set_payload(entity.get_payload())
    else:
        part.set_payload(body)


def _name_file(
    part: EmailMessage, file_name: str | None, parameters: list[tuple[str, str]]
) -> None:
    for name, value in parameters:
        literal.set_parameter(part, name, value, "Content-Type")
    if file_name is not None:
        literal.set_parameter(part, "filename", file_name, "Content-Disposition")


_FILES = ContentManager()
_FILES.add_set_handler(Attachment, _set_file)
