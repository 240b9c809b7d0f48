"""A sending deployment with an allowed directory, and a way to queue a message carrying
resolved files through the composer and the outbox, as a sending use case does."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mailfathom.adapters.mime.compose import StdlibComposer
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.app.sending import rules as sending_rules
from mailfathom.app.sending.ports import AuthoredMessage
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.files import Attachment
from mailfathom.domain.outgoing import AddressField, OutgoingKind, OutgoingRecord
from sending.helpers import AGENT, SendingDeployment


def queue_with_files(
    d: SendingDeployment, files: Sequence[Attachment], *, key: str = "files-1"
) -> OutgoingRecord:
    """Write a message to friend@example.net carrying `files` into the outbox."""
    config = d.services.config
    submission = Submission(config, SqlOutbox(d.services.engine), StdlibComposer(), d.clock)
    recipients = sending_rules.recipients(["friend@example.net"], None, None, 25)
    message = AuthoredMessage(
        from_address="me@example.org",
        from_name=None,
        to=tuple(r.address for r in recipients if r.field is AddressField.TO),
        cc=(),
        subject="Files attached",
        plain_text="The files are attached.",
        html=None,
        attachments=tuple(files),
    )
    return submission.write(AGENT, OutgoingKind.NEW, "work", key, message, recipients)


def outbox_size(d: SendingDeployment) -> int:
    return len(d.services.outbox().listing(100))


def tree(directory: Path) -> dict[str, int]:
    """Every entry below `directory` (links not followed) with its size: what a refusal must
    leave as it was."""
    found: dict[str, int] = {}
    for base, dirs, names in os.walk(directory):
        for name in [*dirs, *names]:
            path = Path(base) / name
            found[str(path.relative_to(directory))] = path.lstat().st_size
    return found
