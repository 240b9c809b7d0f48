"""Resolving what a caller names to attach into files whose octets are read and frozen.

The octets are read when `resolve` is called, and the answer holds them: a file changed or
removed afterwards changes nothing already resolved. Every bound is the one a forward's files
are held to (`MailDelivery.MaxAttachmentCount`, `MaxAttachmentSize`,
`MaxTotalAttachmentSize`), checked before anything is read where the size is known (the
count, a stored part's recorded size, a file's size as its directory entry states it) and
again while reading, which stops one octet past what is left: nothing past a bound is ever
read. A refusal names the bound and never a path or a file name.
"""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.app.files import media_types
from mailfathom.app.files.references import (
    AttachmentReference,
    LocalFileReference,
    StoredPartReference,
)
from mailfathom.app.shared import file_rules
from mailfathom.app.shared.files import Attachment, FileNotServed, FileOverLimit, FileRoots
from mailfathom.app.shared.stored_parts import StoredParts
from mailfathom.domain.access import Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.errors import Refusal

# Attaching a stored part takes the grant a content read takes (checked per reference, see
# `StoredParts`); attaching a local file takes none beyond the tool's own, because the
# operator's `AttachmentRoots` is what says which files may leave this machine.
NO_ROOTS = (
    "This deployment attaches no file from this machine (MailDelivery.AttachmentRoots names "
    "no directory)."
)


def _too_many(bounds: MailDeliveryConfig) -> Refusal:
    return Refusal(
        Code.MESSAGE_TOO_LARGE,
        f"A message carries at most {bounds.max_attachment_count} files "
        "(MailDelivery.MaxAttachmentCount).",
    )


def _file_too_large(bounds: MailDeliveryConfig) -> Refusal:
    return Refusal(
        Code.MESSAGE_TOO_LARGE,
        f"A file is larger than {bounds.max_attachment_octets} octets "
        "(MailDelivery.MaxAttachmentSize).",
    )


def _total_too_large(bounds: MailDeliveryConfig) -> Refusal:
    return Refusal(
        Code.MESSAGE_TOO_LARGE,
        f"The files are larger together than {bounds.max_total_attachment_octets} octets "
        "(MailDelivery.MaxTotalAttachmentSize).",
    )


class AttachmentResolver:
    def __init__(self, bounds: MailDeliveryConfig, parts: StoredParts, roots: FileRoots) -> None:
        self._bounds = bounds
        self._parts = parts
        self._roots = roots

    def resolve(
        self,
        caller: Caller,
        references: Sequence[AttachmentReference],
        carried: Sequence[Attachment] = (),
    ) -> tuple[Attachment, ...]:
        """The files, in the order named, each with its display name and media type (given,
        or derived: a stored part's from what the stored email says, a local file's name
        from its path and its type from that name). `carried` are files the message holds
        already (a forward's): the count and total bounds count them with the named ones."""
        bounds = self._bounds
        if len(carried) + len(references) > bounds.max_attachment_count:
            raise _too_many(bounds)
        local = any(isinstance(r, LocalFileReference) for r in references)
        if local and not self._roots.any_roots():
            raise Refusal(Code.FILES_NOT_ENABLED, NO_ROOTS)
        already = sum(len(file.content) for file in carried)
        if already > bounds.max_total_attachment_octets:
            raise _total_too_large(bounds)
        # Stored parts are described before any file is read, so their recorded sizes are
        # held to the bounds first.
        recorded = already
        for reference in references:
            if isinstance(reference, StoredPartReference):
                row = self._parts.describe(caller, reference.stored_email_id, reference.part_id)
                if row.size_octets > bounds.max_attachment_octets:
                    raise _file_too_large(bounds)
                recorded += row.size_octets
                if recorded > bounds.max_total_attachment_octets:
                    raise _total_too_large(bounds)
        used = already
        files: list[Attachment] = []
        for reference in references:
            room = bounds.max_total_attachment_octets - used
            if isinstance(reference, StoredPartReference):
                file = self._stored(caller, reference)
            else:
                file = self._local(reference, min(bounds.max_attachment_octets, room))
            if len(file.content) > bounds.max_attachment_octets:
                raise _file_too_large(bounds)
            if len(file.content) > room:
                raise _total_too_large(bounds)
            used += len(file.content)
            files.append(file)
        return tuple(files)

    def _stored(self, caller: Caller, reference: StoredPartReference) -> Attachment:
        found = self._parts.read(caller, reference.stored_email_id, reference.part_id)
        media_type = reference.media_type or found.row.media_type
        # A message/* part keeps what the composer is allowed to give it (RFC 2046 section
        # 5.2: an encapsulated message is never base64); every other file goes as base64.
        encoding = found.part.transfer_encoding if media_type.startswith("message/") else "base64"
        return Attachment(
            file_name=reference.file_name or found.row.file_name,
            media_type=media_type,
            content=found.part.content,
            parameters=found.part.parameters,
            transfer_encoding=encoding,
        )

    def _local(self, reference: LocalFileReference, limit: int) -> Attachment:
        try:
            content = self._roots.read(reference.path, limit)
        except FileNotServed:
            raise file_rules.not_served() from None
        except FileOverLimit as over:
            if over.size > self._bounds.max_attachment_octets:
                raise _file_too_large(self._bounds) from None
            raise _total_too_large(self._bounds) from None
        name = reference.file_name or file_rules.last_component(reference.path) or None
        return Attachment(
            file_name=name,
            media_type=reference.media_type or media_types.from_file_name(name),
            content=content,
            transfer_encoding="base64",
        )
