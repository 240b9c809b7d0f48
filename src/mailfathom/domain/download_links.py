"""Links that fetch one attachment of a stored email (get_email_content's
`includeAttachmentDownloadLinks`), as values.

A link is a bearer capability: whoever holds its address fetches that one file, with no
credential, until it expires. What it grants is a `DownloadGrant`; how the grant is sealed
into the address is an adapter's job, and which deployment settings allow issuing one at all
is `DownloadsConfig`.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.connections import SecretRef

# The contract's bounds on how long a link works: ten minutes unless the operator says
# otherwise, and never more than thirty.
DEFAULT_LINK_LIFETIME_SECONDS = 600
MAX_LINK_LIFETIME_SECONDS = 1800

# Where the HTTP entrypoint serves links, below the configured public base address.
DOWNLOAD_PATH = "/downloads/"


@dataclass(frozen=True, slots=True)
class DownloadKey:
    """One key of the ring links are sealed with: `key_id` travels in each link, so a link
    sealed with an older key is still opened while that key stays in the ring."""

    key_id: str
    secret: SecretRef


@dataclass(frozen=True, slots=True)
class DownloadsConfig:
    """The `[Downloads]` section. Links are issued only with both a public base address and
    at least one key; the first key seals new links, the others only open links already
    issued (rotation: add a new key first, remove an old one once its links have expired)."""

    public_base_url: str | None = None
    link_lifetime_seconds: int = DEFAULT_LINK_LIFETIME_SECONDS
    keys: tuple[DownloadKey, ...] = ()

    @property
    def issues_links(self) -> bool:
        return self.public_base_url is not None and bool(self.keys)


@dataclass(frozen=True, slots=True)
class DownloadGrant:
    """What one link lets its holder fetch: the part `part_id` (IMAP body-section numbering)
    of the stored email `stored_email_id` of account `account_id`, until `expires_at`."""

    account_id: str
    stored_email_id: uuid.UUID
    part_id: str
    expires_at: datetime


class LinkFault(enum.Enum):
    """Why a presented link grants nothing, before anything is looked up."""

    # Not an address this deployment sealed: malformed, altered, or sealed with another key.
    NOT_ISSUED_HERE = "notIssuedHere"
    # Names a key this deployment's ring does not hold: one removed since (rotated out), or
    # one it never held. Nothing was sealed with it that this deployment can still open.
    KEY_RETIRED = "keyRetired"
