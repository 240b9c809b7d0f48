"""The shape of this deployment's API keys.

Every key `mailfathom init` and `mailfathom demo` make is `API_KEY_PREFIX` followed by random
text. Where access tokens are accepted beside API keys, a bearer value of that shape which no
configured digest matches is a mistyped or retired key, never a token: it is refused as it
is, neither read as a token nor shown to an identity provider, which would otherwise be handed
a secret of this deployment. No JWT can start so (its header's encoding begins `ey`).
"""

from __future__ import annotations

API_KEY_PREFIX = "mf-"


def is_api_key_shaped(value: str) -> bool:
    return value.startswith(API_KEY_PREFIX)
