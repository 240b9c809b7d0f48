"""Download keys the tests generate, written as a deployment's key secret would be."""

from __future__ import annotations

import base64
import secrets


def new_key_text() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode("ascii")
