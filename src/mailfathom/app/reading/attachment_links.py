"""Minting a download link for each attachment a content read describes, when the call asks
for them and the deployment can issue them.

A link is minted for the account the email belongs to, the email, and the part, and expires
`lifetime` after the read (whole seconds). A deployment without a public address or a key
ring has no `LinkIssuing`, and every attachment then says `unavailable`: asking again cannot
help there, which is what tells it apart from `notRequested`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from mailfathom.app.reading.ports import AttachmentLinks
from mailfathom.domain.download_links import DownloadGrant


@dataclass(frozen=True, slots=True)
class IssuedLink:
    url: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class LinkIssuing:
    links: AttachmentLinks
    lifetime: timedelta
    clock: Callable[[], datetime]

    def issue(self, account_id: str, stored_email_id: uuid.UUID, part_id: str) -> IssuedLink:
        expires_at = (self.clock() + self.lifetime).replace(microsecond=0)
        grant = DownloadGrant(account_id, stored_email_id, part_id, expires_at)
        return IssuedLink(self.links.issue(grant), expires_at)
