"""The mail the end-to-end verdict tests store: signed, tampered, spoofed, unsigned, carrying
receiving servers' reports, and text that does or does not read as machine written."""

from __future__ import annotations

import uuid
from pathlib import Path

from authentication.helpers import SigningKey, sign
from authorship.texts import HAND_TYPED

GENERATED_DIR = Path(__file__).parent.parent / "authorship" / "generated"

GENERATED_TEXT = (
    "Hi team,\r\n\r\n"
    "I hope this email finds you well. I wanted to share a quick update on the migration\u2014"
    "and outline the next steps\u2014so that everyone is aligned before Friday.\r\n\r\n"
    "**Current status:**\r\n"
    "- **Database:** The schema changes are complete and have been reviewed.\r\n"
    "- **Services:** Roughly two thirds of the services now read from the new cluster.\r\n"
    "- **Monitoring:** Dashboards are in place\u2014alerts still need tuning.\r\n\r\n"
    "**Next steps:**\r\n"
    "1. **Cut-over rehearsal** \u2014 scheduled for Wednesday afternoon.\r\n"
    "2. **Rollback plan** \u2014 to be documented and shared by Thursday.\r\n"
    "3. **Final review** \u2014 a short walkthrough with the stakeholders.\r\n\r\n"
    "Please don't hesitate to reach out if you have any questions or concerns. "
    "I look forward to hearing your thoughts.\r\n\r\n"
    "Best regards,\r\nJordan\r\n"
)


def mail(subject: str, author: str, body: str = "See you at nine.\r\n", *above: str) -> bytes:
    """A plain UTF-8 message; `above` are header fields put on top, in order."""
    fields = "".join(f"{field}\r\n" for field in above)
    return (
        f"{fields}"
        f"From: {author}\r\n"
        "To: Owner <owner@example.net>\r\n"
        f"Subject: {subject}\r\n"
        "Date: Mon, 02 Mar 2026 10:00:00 +0000\r\n"
        f"Message-ID: <{uuid.uuid4().hex}@e2e.example>\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n"
        "\r\n"
        f"{body}"
    ).encode()


def signed(raw: bytes, key: SigningKey, domain: str, selector: str) -> bytes:
    return sign(raw, key, domain=domain, selector=selector)


def generated_file(name: str) -> bytes:
    """A message of the authorship corpus of generated mail, with CRLF line ends."""
    text = (GENERATED_DIR / f"{name}.eml").read_bytes()
    return text.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def results(authserv_id: str, outcome: str, domain: str) -> str:
    """An Authentication-Results field of `authserv_id` reporting `outcome` for DKIM and DMARC
    of `domain`."""
    return (
        f"Authentication-Results: {authserv_id}; dkim={outcome} header.d={domain}; "
        f"dmarc={outcome} header.from={domain}"
    )


HAND_WRITTEN_LONG = HAND_TYPED.replace("\n", "\r\n") + "\r\n"
HAND_WRITTEN_SHORT = "back at 3, bring the charger pls\r\n"
