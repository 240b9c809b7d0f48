"""What a caller names a file to attach by: a part of an email this deployment holds, or a
file under a directory the operator allows. Display name and media type may be given; what is
not given is derived when the file is resolved.

`attachment_reference` reads a caller's words (as a tool argument delivers them) into one of
the two, refusing with 51018 before anything is looked up.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from mailfathom.app.shared import file_rules
from mailfathom.app.shared.email_identifiers import parse_identifier
from mailfathom.domain.codes import Code


@dataclass(frozen=True, slots=True)
class StoredPartReference:
    """Part `part_id` (as get_email_content numbers attachments) of a stored email."""

    stored_email_id: uuid.UUID
    part_id: str
    file_name: str | None = None
    media_type: str | None = None


@dataclass(frozen=True, slots=True)
class LocalFileReference:
    """The regular file at `path`, an absolute path inside `MailDelivery.AttachmentRoots`."""

    path: str
    file_name: str | None = None
    media_type: str | None = None


AttachmentReference = StoredPartReference | LocalFileReference


def attachment_reference(
    *,
    stored_email_id: object = None,
    part_id: object = None,
    file_path: object = None,
    file_name: object = None,
    media_type: object = None,
) -> AttachmentReference:
    """Exactly one of a stored part (`stored_email_id` with `part_id`) and a `file_path`."""
    name = file_rules.display_name(file_name, "fileName")
    kind = file_rules.media_type(media_type, "mediaType")
    stored = stored_email_id is not None or part_id is not None
    if stored == (file_path is not None):
        raise file_rules.not_accepted(
            "An attachment names either storedEmailId with partId, or filePath; exactly one."
        )
    if not stored:
        path = file_rules.file_path(file_path, "filePath")
        if name is None:
            # The file travels under the path's last component.
            file_rules.shown_name(file_rules.last_component(path), "filePath")
        return LocalFileReference(path, name, kind)
    if stored_email_id is None or part_id is None:
        raise file_rules.not_accepted("storedEmailId and partId are given together.")
    identifier = parse_identifier(stored_email_id, Code.NOT_AN_EMAIL_IDENTIFIER, "storedEmailId")
    return StoredPartReference(identifier, file_rules.part_id(part_id, "partId"), name, kind)
