"""Saving one attachment of a stored email into a file under a directory the operator allows
(get_email_content's `savePart` and `saveTo`).

Saving writes to the operator's disk, so it takes a grant of its own beside the read's,
`mailfathom.files.write`, and a deployment whose `MailDelivery.AttachmentRoots` names no
directory saves nothing: both are 56004. The file is created and never replaced (an existing
name is 58002), its directory must already exist inside an allowed one, and no symbolic link
is followed (53011, the one answer for any place this deployment does not write). Refusals
and log lines never carry the path or the file's name.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import structlog

from mailfathom.app.reading.views import SavedFile
from mailfathom.app.shared import file_rules
from mailfathom.app.shared.authorization import Permissions, permits
from mailfathom.app.shared.files import FileNameTaken, FileNotServed, FileRoots
from mailfathom.app.shared.stored_parts import StoredParts
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

log = structlog.get_logger("mailfathom.read")

SAVE_PERMISSIONS: Permissions = frozenset({Permission.MAIL_READ, Permission.FILES_WRITE})


@dataclass(frozen=True, slots=True)
class SaveRequest:
    stored_email_id: uuid.UUID
    part_id: str
    path: str


def save_requested(save_part: object, save_to: object) -> bool:
    """Whether a call asks to save: both arguments, or neither (checked before which emails
    it names)."""
    if (save_part is None) != (save_to is None):
        raise file_rules.not_accepted("savePart and saveTo are given together.")
    return save_part is not None


def save_request(
    save_part: object, save_to: object, stored_email_ids: list[uuid.UUID] | None
) -> SaveRequest:
    """The save a call asks for, with exactly one email named by storedEmailIds."""
    if stored_email_ids is None or len(stored_email_ids) != 1:
        raise file_rules.not_accepted(
            "Saving an attachment names exactly one email, by storedEmailIds."
        )
    part_id = file_rules.part_id(save_part, "savePart")
    path = file_rules.file_path(save_to, "saveTo")
    file_rules.shown_name(file_rules.last_component(path), "saveTo")
    return SaveRequest(stored_email_ids[0], part_id, path)


class PartSaving:
    def __init__(self, parts: StoredParts, roots: FileRoots) -> None:
        self._parts = parts
        self._roots = roots

    def save(self, caller: Caller, request: SaveRequest) -> SavedFile:
        if not permits(caller, SAVE_PERMISSIONS):
            raise Refusal(
                Code.FILES_NOT_ENABLED,
                "Saving a file needs the mailfathom.files.write grant, which this caller "
                "does not hold.",
            )
        if not self._roots.any_roots():
            raise Refusal(
                Code.FILES_NOT_ENABLED,
                "This deployment saves no file (MailDelivery.AttachmentRoots names no directory).",
            )
        found = self._parts.read(caller, request.stored_email_id, request.part_id)
        try:
            written = self._roots.create(request.path, found.part.content)
        except FileNotServed:
            raise file_rules.not_served() from None
        except FileNameTaken:
            raise Refusal(
                Code.FILE_ALREADY_EXISTS,
                "Something already exists at saveTo; a saved file never replaces anything, "
                "so name a new file.",
            ) from None
        log.info("attachment.saved", size_octets=len(found.part.content))
        return SavedFile(written, found.row.media_type, len(found.part.content))
