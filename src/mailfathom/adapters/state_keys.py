"""Keys every replica of one deployment derives alike from `[McpEndpoint] StateSecret`.

What a client carries sealed (a continuation cursor, the state of a question put to a
person) must open on whichever replica the next request reaches, so the key cannot be made
per process or kept in one machine's data directory. Each purpose gets a key of its own,
derived with HKDF-SHA256 under a label naming it, so a token sealed for one purpose never
opens as another."""

from __future__ import annotations

from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mailfathom.domain.errors import ConfigurationError

MIN_SECRET_OCTETS = 32
CURSORS = "cursors"
REQUEST_STATE = "request-state"


def derived_key(secret: str, purpose: str) -> bytes:
    """The 32-octet key for `purpose` under the deployment's state secret."""
    material = secret.encode("utf-8")
    if len(material) < MIN_SECRET_OCTETS:
        raise ConfigurationError(
            f"McpEndpoint.StateSecret must be at least {MIN_SECRET_OCTETS} octets of secret "
            "randomness (for example 64 hexadecimal digits)."
        )
    label = b"mailfathom/state-key/v1/" + purpose.encode("ascii")
    return HKDF(algorithm=SHA256(), length=32, salt=None, info=label).derive(material)
