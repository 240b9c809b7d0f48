"""The owner's console: a web page, served by `mailfathom serve` on a listener of its own,
where the person who owns the mailboxes sees what agents did and decides on it.

Only values and rules live here: the section's settings, and the bounds on signing in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from mailfathom.domain.passkeys import DEFAULT_PASSKEY_NAME, default_origins, name_problem

DEFAULT_CONSOLE_HOST = "127.0.0.1"
DEFAULT_CONSOLE_PORT = 8626

SESSION_LIFETIME_SECONDS = 12 * 3600
"""How long a signed-in session lasts, however active: the owner signs in again after it."""

FRESH_SIGN_IN_SECONDS = 5 * 60
"""How long after signing in the owner may add or remove a sign-in credential (a passkey, an
API key): a session cookie copied from the owner's browser is worth hours, not this, so it
can neither add an attacker's own credential nor remove the owner's or the agents'."""

SIGN_IN_FORMS_KEPT = 500
"""Sign-in forms (sessions not signed in) kept at most: a visit without a cookie writes
one, so the newest are kept and older ones are forgotten (their form must be reloaded)."""

SIGN_IN_WINDOW_SECONDS = 15 * 60
"""How long the sign-in form of one visit (its session before signing in) stays usable."""

FREE_FAILURES_PER_CLIENT = 5
"""Wrong passwords one client address may give before each further try waits."""

FREE_FAILURES_OVERALL = 20
"""Wrong passwords all clients together may give before every try waits: a guesser
spreading over many addresses is held too."""

FIRST_WAIT_SECONDS = 30
"""The wait after the last free failure; each failure after it doubles the wait."""

LONGEST_WAIT_SECONDS = 3600

SHORTEST_PASSWORD = 12
"""Characters an owner password has at least."""

LONGEST_PASSWORD = 1024
"""Characters an owner password has at most: hashing is work, and the form is bounded."""


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """`[Console]`: whether `serve` serves the console, and where. Off by default, and on a
    loopback address unless the operator writes another."""

    enabled: bool = False
    host: str = DEFAULT_CONSOLE_HOST
    port: int = DEFAULT_CONSOLE_PORT
    # The name passkeys are made for, and the origins they are used at (none written: the
    # defaults of `passkeys.default_origins`).
    passkey_name: str = DEFAULT_PASSKEY_NAME
    passkey_origins: tuple[str, ...] = ()
    # The HTTPS origin a reverse proxy publishes the console at, or None when it is reached
    # at its listener only (`public_origin_problem`).
    public_origin: str | None = None

    def origins(self) -> tuple[str, ...]:
        """The origins a passkey ceremony is accepted from: as written, else the public
        origin, else the defaults for the name."""
        if self.passkey_origins:
            return self.passkey_origins
        if self.public_origin is not None:
            return (self.public_origin,)
        return default_origins(self.passkey_name, self.port)


def public_origin_problem(origin: str) -> str | None:
    """Why `origin` cannot be the console's public origin, or None when it can: `https://`,
    a host name in lower case (a passkey is bound to a name, never to an address), an
    optional port, nothing else."""
    example = "must be an origin such as https://console.example.org"
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return example
    if parts.scheme != "https":
        return "must begin with https:// (the proxy in front of the console terminates TLS)"
    if parts.path or parts.query or parts.fragment or origin.endswith(("?", "#")):
        return "must have nothing after the host and port"
    if parts.username is not None or parts.password is not None or port == 0:
        return example
    host = parts.hostname or ""
    if not host:
        return example
    if origin != origin.lower():
        return "must be written in lower case"
    problem = name_problem(host)
    return None if problem is None else f"its host {problem}"


def canonical_origin(origin: str) -> str:
    """`origin` as a browser writes it in `Origin`: without the default port 443."""
    return origin[: -len(":443")] if origin.endswith(":443") else origin


def wait_after(failures: int, free: int) -> int:
    """Seconds a client that gave `failures` wrong passwords in a row waits before its next
    try, when `free` of them cost nothing: none up to `free`, then a wait that doubles with
    every failure, up to an hour."""
    if failures < free:
        return 0
    doubling = min(failures - free, 16)
    return int(min(FIRST_WAIT_SECONDS * 2**doubling, LONGEST_WAIT_SECONDS))


def signed_in_lately(signed_in_at: datetime, now: datetime) -> bool:
    """Whether a sign-in made at `signed_in_at` is recent enough at `now` to add or remove a
    credential."""
    return now - signed_in_at <= timedelta(seconds=FRESH_SIGN_IN_SECONDS)


def password_problem(password: str) -> str | None:
    """Why `password` cannot be the owner password, or None when it can."""
    if len(password) < SHORTEST_PASSWORD:
        return f"The password needs at least {SHORTEST_PASSWORD} characters."
    if len(password) > LONGEST_PASSWORD:
        return f"The password may have at most {LONGEST_PASSWORD} characters."
    if any(ch in "\r\n\x00" for ch in password):
        return "The password may not hold line breaks or NUL characters."
    return None
