"""Asking a person for access to a mail account from the terminal, for `mailfathom init
--provider` and `mfctl account consent`.

The flow is the operator's choice, or else the provider's usual one: the device flow where
the provider offers it for mail (a code typed on any device works over SSH and in a
container), the loopback redirect otherwise. Google is the exception that decides it: its
device flow grants no mail scope, so Gmail always goes through the browser, and asking for
the device flow is refused before anything is sent.

What the person must act on is printed and flushed at once, so a command run by a script
with its output in a pipe still shows the code while it waits. The refresh token is never
printed: the grant is handed to the caller, which writes it where it belongs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from mailfathom.bootstrap import DevicePrompt, Grant, OAuthClient, device_grant, loopback_grant
from mailfathom.domain.codes import CheckCode
from mailfathom.domain.errors import GrantFailed
from mailfathom.domain.oauth import OAuthProvider
from mailfathom.entrypoints.cli.init_oauth_answers import GrantFlow

Say = Callable[[str], None]

# Google issues a refresh token only for offline access, and only when its consent page was
# shown, which it skips for a client already granted unless asked.
_AUTHORIZATION_EXTRAS = {OAuthProvider.GMAIL: {"access_type": "offline", "prompt": "consent"}}
# The providers whose sign-in page takes the user to sign in as (`login_hint`): the person
# is offered the account's own user first instead of whichever they last used.
_HINTED = frozenset({OAuthProvider.GMAIL, OAuthProvider.MICROSOFT})
# Entra ID registers a desktop client's loopback redirect as `http://localhost`.
_REDIRECT_HOSTS = {OAuthProvider.MICROSOFT: "localhost"}


class Endpoints(Protocol):
    """Where a provider is asked: its preset, its discovered metadata, or an account's
    `OAuth` block, which all name them alike."""

    @property
    def token_endpoint(self) -> str: ...
    @property
    def device_authorization_endpoint(self) -> str | None: ...
    @property
    def authorization_endpoint(self) -> str | None: ...
    @property
    def revocation_endpoint(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class GrantPlan:
    """Who asks (the client), and where: the endpoints the provider offers; `login_hint`
    is the account's user, which the person is meant to sign in as."""

    provider: OAuthProvider
    client: OAuthClient
    token_endpoint: str
    device_authorization_endpoint: str | None
    authorization_endpoint: str | None
    login_hint: str | None = None

    @classmethod
    def at(
        cls,
        provider: OAuthProvider,
        client: OAuthClient,
        endpoints: Endpoints,
        login_hint: str | None = None,
    ) -> GrantPlan:
        return cls(
            provider,
            client,
            endpoints.token_endpoint,
            endpoints.device_authorization_endpoint,
            endpoints.authorization_endpoint,
            login_hint,
        )


def choose_flow(plan: GrantPlan, asked: GrantFlow | None) -> GrantFlow:
    """The flow asked for, or the provider's usual one. Raises `GrantFailed` (72009) for a
    flow the provider does not offer for mail."""
    if plan.provider is OAuthProvider.GMAIL and asked is GrantFlow.DEVICE:
        raise _not_offered(
            "Google's device flow does not grant the mail scope; use --flow loopback"
        )
    flow = asked
    if flow is None:
        offers_device = plan.device_authorization_endpoint is not None
        flow = GrantFlow.DEVICE if offers_device else GrantFlow.LOOPBACK
    if flow is GrantFlow.DEVICE and plan.device_authorization_endpoint is None:
        raise _not_offered("the provider names no device authorization endpoint")
    if flow is GrantFlow.LOOPBACK and plan.authorization_endpoint is None:
        raise _not_offered("the provider names no authorization endpoint")
    return flow


def _not_offered(why: str) -> GrantFailed:
    return GrantFailed(
        f"That way of granting access is not offered: {why}.",
        code=int(CheckCode.AUTHORIZATION_FLOW_NOT_OFFERED),
    )


def _has_desktop() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _flushed(say: Say, lines: list[str]) -> None:
    for line in lines:
        say(line)
    sys.stdout.flush()


def obtain_grant(plan: GrantPlan, flow: GrantFlow, say: Say, *, interactive: bool) -> Grant:
    """Run `flow` with the person; raises `GrantFailed` as the flows do."""
    if flow is GrantFlow.DEVICE:
        assert plan.device_authorization_endpoint is not None

        def show_code(prompt: DevicePrompt) -> None:
            lines = [
                f"To grant access, open {prompt.verification_uri} on any device and enter "
                f"the code {prompt.user_code}",
            ]
            if prompt.verification_uri_complete:
                lines.append(f"(or open {prompt.verification_uri_complete})")
            minutes = max(1, prompt.expires_in // 60)
            lines.append(f"Waiting for the approval; the code expires in {minutes} minute(s) ...")
            _flushed(say, lines)

        return device_grant(
            plan.device_authorization_endpoint, plan.token_endpoint, plan.client, show_code
        )
    assert plan.authorization_endpoint is not None
    opening = interactive and _has_desktop()

    def show_url(url: str) -> None:
        _flushed(
            say,
            [
                "To grant access, open this address in a browser"
                + (" (one is being opened)" if opening else "")
                + ", sign in and approve:",
                url,
                "Waiting for the browser to come back to this machine ...",
            ],
        )

    return loopback_grant(
        plan.authorization_endpoint,
        plan.token_endpoint,
        plan.client,
        show_url,
        redirect_host=_REDIRECT_HOSTS.get(plan.provider, "127.0.0.1"),
        open_browser=opening,
        extra=_authorization_extras(plan),
    )


def _authorization_extras(plan: GrantPlan) -> dict[str, str]:
    extra = dict(_AUTHORIZATION_EXTRAS.get(plan.provider, {}))
    if plan.login_hint and plan.provider in _HINTED:
        extra["login_hint"] = plan.login_hint
    return extra


def default_refresh_token_file(data_dir: Path, account_id: str) -> Path:
    """`secrets/ACCOUNT.refresh` beside the data directory, not in it (the store's files are
    copied and moved for other reasons than its secrets), one file per account."""
    return data_dir.parent / "secrets" / f"{account_id}.refresh"
