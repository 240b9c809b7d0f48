"""What a local mailbox holds of mail the deployment delivered: the message as sent, with the
deployment's one `Authentication-Results` field on top, as a receiving server adds its trace."""

from __future__ import annotations

from email.parser import BytesHeaderParser

DEPLOYMENT_ID = "mailfathom.invalid"


def as_sent(delivered: bytes, sent: bytes) -> bool:
    """Whether `delivered` is exactly `sent` below one field of the deployment's id."""
    if not delivered.endswith(sent):
        return False
    prefix = delivered[: len(delivered) - len(sent)]
    fields = BytesHeaderParser().parsebytes(prefix + b"\r\n").items()
    return (
        len(fields) == 1
        and fields[0][0].lower() == "authentication-results"
        and str(fields[0][1]).split(";", 1)[0].strip().lower() == DEPLOYMENT_ID
    )
