"""The `[Downloads]` section: where attachment download links point, how long they work, and
the keys they are sealed with.

Links are issued only with both `PublicBaseUrl` and at least one `[[Downloads.Keys]]` entry;
without either, a request for links is answered `unavailable`. A key is a secret reference
like any other secret of the deployment: the key itself is never written in the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import SECURE_ADDRESS_RULE, parse_secret
from mailfathom.domain.download_links import (
    DEFAULT_LINK_LIFETIME_SECONDS,
    MAX_LINK_LIFETIME_SECONDS,
    DownloadKey,
    DownloadsConfig,
)
from mailfathom.domain.web_addresses import is_secure_address

_KEYS = frozenset({"PublicBaseUrl", "LinkLifetimeSeconds", "Keys"})
_KEY_KEYS = frozenset({"Id", "Secret"})
# A key id travels in every link it seals, before the separator: URL-safe and short.
KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def parse_downloads(table: Table | None, base_dir: Path) -> DownloadsConfig:
    if table is None:
        return DownloadsConfig()
    table.refuse_unknown(_KEYS)
    keys = [_parse_key(entry, base_dir) for entry in table.tables("Keys")]
    ids = [k.key_id for k in keys if k is not None]
    if len(set(ids)) != len(ids):
        table.problems.add(table.at("Keys"), "every entry needs an Id of its own")
    return DownloadsConfig(
        public_base_url=_parse_base_url(table),
        link_lifetime_seconds=_parse_lifetime(table),
        keys=tuple(k for k in keys if k is not None),
    )


def _parse_base_url(table: Table) -> str | None:
    text = table.string("PublicBaseUrl")
    if text is None:
        return None
    if not public_base_url_allowed(text):
        table.problems.add(table.at("PublicBaseUrl"), SECURE_ADDRESS_RULE)
        return None
    return text.rstrip("/")


def public_base_url_allowed(text: str) -> bool:
    """Whether `text` is an address links may be written under: https with a host, or http
    on a loopback host (a test, or a proxy on the same machine), carrying nothing a link
    could not be appended to."""
    return is_secure_address(text)


def _parse_lifetime(table: Table) -> int:
    value = table.integer("LinkLifetimeSeconds")
    if value is None:
        return DEFAULT_LINK_LIFETIME_SECONDS
    if not 1 <= value <= MAX_LINK_LIFETIME_SECONDS:
        table.problems.add(
            table.at("LinkLifetimeSeconds"),
            f"must be an integer from 1 to {MAX_LINK_LIFETIME_SECONDS} (thirty minutes)",
        )
        return DEFAULT_LINK_LIFETIME_SECONDS
    return value


def _parse_key(table: Table, base_dir: Path) -> DownloadKey | None:
    table.refuse_unknown(_KEY_KEYS)
    key_id = table.string("Id", required=True)
    if key_id is not None and not KEY_ID.fullmatch(key_id):
        table.problems.add(
            table.at("Id"), "must be 1 to 32 letters, digits, underscores or hyphens"
        )
        key_id = None
    secret = None
    if table.has("Secret"):
        secret = parse_secret(table, "Secret", base_dir)
    else:
        table.problems.add(table.at("Secret"), "is required")
    if key_id is None or secret is None:
        return None
    return DownloadKey(key_id, secret)
