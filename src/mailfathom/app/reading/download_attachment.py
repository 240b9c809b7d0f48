"""Serving one attachment to whoever presents a download link get_email_content issued.

The link is the whole authorization: it was minted for a caller holding the read grant, for
one part of one email of one account, and it expires. Presenting it again is checked as
strictly as the read was: the email must still be held in a folder tools may read, of the
account the link names, and the part must still be an attachment it carries. Each refusal is
a code of its own and a sentence naming nothing about the mail; content found missing is
answered 55001 with a repair request, as a content read answers it. Nothing is looked up
for a link that does not open, and nothing here lists or searches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import structlog

from mailfathom.app.reading.ports import AttachmentLinks
from mailfathom.app.shared.stored_parts import READ_PERMISSIONS, StoredParts
from mailfathom.domain.access import Caller
from mailfathom.domain.codes import Code
from mailfathom.domain.download_links import LinkFault
from mailfathom.domain.errors import ContentMissingError, Refusal

log = structlog.get_logger("mailfathom.download")

# Who reads the part: the holder of a link, with the read grant the link was minted under.
LINK_HOLDER = Caller(permissions=READ_PERMISSIONS, label="download-link")

NOT_RECOGNIZED = (
    Code.DOWNLOAD_LINK_NOT_RECOGNIZED,
    "This is not a download link this deployment issued.",
)
EXPIRED = (
    Code.DOWNLOAD_LINK_EXPIRED,
    "This download link has expired; read the email again for a new one.",
)
KEY_RETIRED = (
    Code.DOWNLOAD_LINK_KEY_RETIRED,
    "This download link was sealed with a key this deployment no longer accepts; read the "
    "email again for a new one.",
)
GONE = (Code.DOWNLOAD_FILE_GONE, "The file this link fetched is no longer served.")
_REPAIRING = "The stored content of this email is being repaired"
UNREADABLE = (Code.CONTENT_UNAVAILABLE, _REPAIRING + "; ask again after the next synchronization.")
_FAULTS: dict[LinkFault, tuple[Code, str]] = {
    LinkFault.NOT_ISSUED_HERE: NOT_RECOGNIZED,
    LinkFault.KEY_RETIRED: KEY_RETIRED,
}


@dataclass(frozen=True, slots=True)
class DownloadedFile:
    """What a link fetches: the normalized file name (None for a part that has no usable
    one), the stored media type, and the decoded octets."""

    file_name: str | None
    media_type: str
    content: bytes


class AttachmentDownload:
    def __init__(
        self,
        links: AttachmentLinks | None,
        parts: StoredParts,
        clock: Callable[[], datetime],
    ) -> None:
        self._links = links
        self._parts = parts
        self._clock = clock

    def fetch(self, token: str) -> DownloadedFile:
        """The file `token` grants, or a `Refusal` saying why not. A deployment that issues
        no links recognizes none."""
        try:
            found = self._fetch(token)
        except Refusal as refusal:
            log.info("download.refused", code=refusal.code)
            raise
        log.info("download.served", size_octets=len(found.content))
        return found

    def _fetch(self, token: str) -> DownloadedFile:
        if self._links is None:
            raise Refusal(*NOT_RECOGNIZED)
        grant = self._links.open(token)
        if isinstance(grant, LinkFault):
            raise Refusal(*_FAULTS[grant])
        if self._clock() >= grant.expires_at:
            raise Refusal(*EXPIRED)
        try:
            found = self._parts.read(
                LINK_HOLDER, grant.stored_email_id, grant.part_id, account_id=grant.account_id
            )
        except ContentMissingError:
            raise Refusal(*UNREADABLE) from None
        except Refusal as refusal:
            if refusal.code in (Code.EMAIL_NOT_HELD, Code.FILE_NOT_SERVED):
                raise Refusal(*GONE) from None
            raise
        return DownloadedFile(found.row.file_name, found.row.media_type, found.part.content)
