"""Passkeys (WebAuthn) for the owner's console: which name they are made for, which web
origins may use them, and the bounds of a ceremony.

A passkey is bound by the browser to a name (the relying party's identifier): a host name,
never an IP address (browsers refuse one). The console takes that name and the origins it is
reached at from its configuration only, so no request's `Host` can choose either."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

CHALLENGE_LIFETIME_SECONDS = 120
"""How long a ceremony's challenge stays usable once issued: it is used once, then gone."""

FIRST_PASSKEY_CODE_SECONDS = 15 * 60
"""How long a code of `mailfathom console first-passkey` lets the owner's first passkey be
made: long enough to open the console after printing it, short enough that a code copied
from a terminal's scrollback later is worth nothing."""

CEREMONY_TIMEOUT_MILLISECONDS = 60_000
"""How long the browser is asked to wait for the authenticator; shorter than the challenge."""

LONGEST_LABEL = 64
"""Characters a passkey's label keeps at most."""

MOST_PASSKEYS = 20
"""How many passkeys the owner may hold. A person's phones, computers, security keys and
password managers come to a handful; every one held is listed on the Passkeys page and
named in each enrolment's options (so that a device holding one is not enrolled twice), so
the store, the page and the options stay small."""

DEFAULT_PASSKEY_NAME = "localhost"

_LABEL_REMOVED = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_HOST_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)")


def name_problem(name: str) -> str | None:
    """Why `name` cannot be the name passkeys are made for, or None when it can: a host
    name in lower case, not an IP address."""
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        pass
    else:
        return "must be a host name, not an IP address (browsers refuse an address)"
    if name != name.lower() or len(name) > 253:
        return "must be a host name in lower case, at most 253 characters"
    if not all(_HOST_LABEL.fullmatch(label) for label in name.split(".")):
        return "must be a host name: letters, digits and hyphens between dots"
    return None


def origin_problem(origin: str, name: str) -> str | None:
    """Why `origin` cannot carry passkeys made for `name`, or None when it can: `https://`
    (`http://` only on `localhost`), a host that is `name` or under it, and nothing after the
    port."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return "must be an origin such as https://console.example.org"
    host = parts.hostname or ""
    if origin != origin.lower() or parts.path or parts.query or parts.fragment:
        return "must be an origin in lower case with nothing after the host and port"
    if parts.username is not None or parts.password is not None or port == 0:
        return "must be an origin such as https://console.example.org"
    if parts.scheme not in ("https", "http") or (parts.scheme == "http" and host != "localhost"):
        return "must begin with https:// (http:// only for localhost)"
    if host != name and not host.endswith("." + name):
        return f"must name {name} or a host under it"
    return None


def default_origins(name: str, port: int) -> tuple[str, ...]:
    """Where passkeys are used when no origin is configured: the console's own port on
    `localhost` (an SSH tunnel keeping the port), or the name over HTTPS (a proxy)."""
    if name == "localhost":
        return (f"http://localhost:{port}",)
    return (f"https://{name}",)


def cleaned_label(text: str, fallback: str) -> str:
    """A passkey's label as kept: control characters removed, outer spaces stripped, at
    most `LONGEST_LABEL` characters; `fallback` when nothing is left."""
    label = _LABEL_REMOVED.sub("", text).strip()[:LONGEST_LABEL].strip()
    return label or fallback
