"""The shape of this deployment's API keys.

Every key `mailfathom init` and `mailfathom demo` make is `API_KEY_PREFIX` followed by random
text. Where access tokens are accepted beside API keys, a bearer value of that shape which no
configured digest matches is a mistyped or retired key, never a token: it is refused as it
is, neither read as a token nor shown to an identity provider, which would otherwise be handed
a secret of this deployment. No JWT can start so (its header's encoding begins `ey`).

A key the owner creates in the console is of the same family: `CONSOLE_KEY_PREFIX`, a key
identifier of 12 hexadecimal digits, a hyphen and 43 characters of URL-safe base64 (256
random bits). The identifier is not secret: it names the key on the console's pages and in
the store, and lets the endpoint find the one stored digest to compare the key with.
"""

from __future__ import annotations

import hashlib
import re

API_KEY_PREFIX = "mf-"
CONSOLE_KEY_PREFIX = API_KEY_PREFIX + "k"
CONSOLE_KEY_ID_HEX = 12
CONSOLE_KEY_SECRET_BYTES = 32

MOST_KEYS_PER_CALLER = 50
"""How many active console keys one caller entry may hold: room for a key of its own on each
machine or agent that admits as the entry, so that one can be revoked alone, while the
callers page lists every one. Agents past that are better written as entries of their own."""

REVOKED_KEYS_KEPT = 1000
"""How many revoked console keys the store keeps, the last revoked: a revoked key's row keeps
its form used, so a create form sent again makes no key. Older ones are deleted as keys are
revoked."""

_CONSOLE_KEY = re.compile(
    re.escape(CONSOLE_KEY_PREFIX) + f"([0-9a-f]{{{CONSOLE_KEY_ID_HEX}}})-[A-Za-z0-9_-]{{43}}"
)


def is_api_key_shaped(value: str) -> bool:
    return value.startswith(API_KEY_PREFIX)


def key_digest(value: str) -> str:
    """The hex SHA-256 a key is kept and compared as (the key itself is never kept)."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def console_key(key_id: str, secret: str) -> str:
    return f"{CONSOLE_KEY_PREFIX}{key_id}-{secret}"


def console_key_id(value: str) -> str | None:
    """The identifier of a console key of this shape, or None for anything else."""
    found = _CONSOLE_KEY.fullmatch(value)
    return None if found is None else found.group(1)
