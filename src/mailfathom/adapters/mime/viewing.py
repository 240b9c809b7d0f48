"""Reading a message this deployment composed back into what a person is shown of it
(`MessageViewer`): the header rows decoded, the text and the HTML alternative as sent (line
ends read as LF), each attached file's name and decoded size."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from mailfathom.app.confirmation.ports import ViewedMessage

_PARSER = BytesParser(policy=policy.default)


def _text(part: EmailMessage | None) -> str | None:
    if part is None:
        return None
    content = part.get_content()
    return content.replace("\r\n", "\n") if isinstance(content, str) else None


def _addresses(message: EmailMessage, name: str) -> tuple[str, ...]:
    header = message.get(name)
    if header is None:
        return ()
    return tuple(str(a) for a in getattr(header, "addresses", ()))


class MimeMessageViewer:
    def view(self, mime: bytes) -> ViewedMessage:
        message = _PARSER.parsebytes(mime)
        assert isinstance(message, EmailMessage)
        files = []
        for part in message.iter_attachments():
            payload = part.get_payload(decode=True)
            name = part.get_filename() or part.get_content_type()
            files.append((name, len(payload) if isinstance(payload, bytes) else 0))
        return ViewedMessage(
            sender=str(message.get("From", "")),
            to=_addresses(message, "To"),
            cc=_addresses(message, "Cc"),
            subject=str(message.get("Subject", "")),
            body=_text(message.get_body(("plain",))) or "",  # type: ignore[arg-type]
            html=_text(message.get_body(("html",))),  # type: ignore[arg-type]
            files=tuple(files),
        )
