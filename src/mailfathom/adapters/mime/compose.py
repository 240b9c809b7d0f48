"""Composing an outgoing message with the standard library's `email` package.

The policy is SMTP's (CRLF line ends, lines folded at 78) with a 7-bit transfer encoding for
every part: a server that does not offer 8BITMIME accepts it as it is, and no body is ever
re-encoded on the way. Non-ASCII header text becomes RFC 2047 encoded words.

This Python's `email` package does not refuse a line break inside a header value (the fixes
for CVE-2024-6923 came later), and writes a lone surrogate as an `unknown-8bit` encoded word,
so every header value is held here to the same one-line rule the use case applies before it
reaches a header.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from mailfathom.app.sending_ports import AuthoredMessage, ComposedMessage
from mailfathom.domain import text_rules

_POLICY = policy.SMTP.clone(cte_type="7bit")


def _header_safe(value: str) -> str:
    if not text_rules.is_one_line(value):
        raise ValueError("a header value carries a line break or a control character")
    return value


class StdlibComposer:
    def compose(self, message: AuthoredMessage) -> ComposedMessage:
        mail = EmailMessage(policy=_POLICY)
        local, _, domain = message.from_address.rpartition("@")
        mail["From"] = Address(
            display_name=_header_safe(message.from_name or ""), username=local, domain=domain
        )
        if message.to:
            mail["To"] = ", ".join(_header_safe(a) for a in message.to)
        if message.cc:
            mail["Cc"] = ", ".join(_header_safe(a) for a in message.cc)
        mail["Subject"] = _header_safe(message.subject)
        mail["Date"] = format_datetime(message.sent_at or datetime.now(UTC))
        message_id = make_msgid(domain=domain)
        mail["Message-ID"] = message_id
        if message.in_reply_to is not None:
            mail["In-Reply-To"] = _header_safe(message.in_reply_to)
        if message.references:
            mail["References"] = " ".join(_header_safe(r) for r in message.references)
        mail.set_content(message.plain_text)
        if message.html is not None:
            mail.add_alternative(message.html, subtype="html")
        for attachment in message.attachments:
            maintype, _, subtype = attachment.media_type.partition("/")
            if not subtype:
                maintype, subtype = "application", "octet-stream"
            mail.add_attachment(
                attachment.content,
                maintype=maintype,
                subtype=subtype,
                filename=attachment.file_name,
            )
        return ComposedMessage(message_id=message_id, mime=mail.as_bytes(policy=_POLICY))
