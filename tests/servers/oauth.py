"""Start, drive and stop the test OAuth 2.0 / 2.1 authorization server (`oauth_main.py`).

The server is a process of its own on 127.0.0.1, stopped by its pid. Clients talk to it as to
any authorization server, over HTTP at the endpoints below (all named in its RFC 8414
metadata). The test plays the person and the administrator through the methods of
`OAuthServer`, which post to a control route guarded by a secret made here.
"""

from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx2

from ._common import ServerError, ServerStartError, scratch_dir, tail, terminate

STARTUP_TIMEOUT = 30.0
TESTS_DIR = Path(__file__).resolve().parents[1]
CONTROL_HEADER = "X-Control-Secret"


class OAuthServer:
    """A real authorization server built from authlib, for tests.

    Access tokens are RFC 9068 JWTs signed RS256 (`iss`, `sub`, `aud`, `scope`, `client_id`,
    `exp`, `iat`, `jti`); `aud` is the RFC 8707 `resource` of the request, else the client id.
    Introspection answers a token `active` while it is unexpired and unrevoked, with
    `username` = `sub`. Refresh tokens rotate at each use unless `rotate_refresh_tokens` is
    false; a rotated-out refresh token is refused with `invalid_grant`, and revoking it
    (RFC 7009) is answered 200 and ends nothing, as for any token the server no longer knows.
    """

    def __init__(self, *, rotate_refresh_tokens: bool = True, device_interval: int = 1) -> None:
        self.rotate_refresh_tokens = rotate_refresh_tokens
        self.device_interval = device_interval
        self.root = scratch_dir("mailfathom-oauth-")
        self.introspection_client: tuple[str, str] = (
            "introspector",
            secrets.token_urlsafe(24),
        )
        self._control_secret = secrets.token_urlsafe(32)
        self._proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    # ------------------------------------------------------------- endpoints

    @property
    def issuer(self) -> str:
        if not self.port:
            raise RuntimeError("the authorization server has not been started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/oauth-authorization-server"

    @property
    def authorization_endpoint(self) -> str:
        return f"{self.issuer}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/token"

    @property
    def device_authorization_endpoint(self) -> str:
        return f"{self.issuer}/device_authorization"

    @property
    def registration_endpoint(self) -> str:
        return f"{self.issuer}/register"

    @property
    def revocation_endpoint(self) -> str:
        return f"{self.issuer}/revoke"

    @property
    def introspection_endpoint(self) -> str:
        return f"{self.issuer}/introspect"

    @property
    def jwks_uri(self) -> str:
        return f"{self.issuer}/jwks"

    # ------------------------------------------------------------- lifecycle

    def start(self) -> OAuthServer:
        if self._proc is not None:
            raise RuntimeError("the authorization server is already running")
        config_path = self.root / "config.json"
        config_path.write_text(
            json.dumps(
                {
                    "control_secret": self._control_secret,
                    "introspection_client": list(self.introspection_client),
                    "rotate_refresh_tokens": self.rotate_refresh_tokens,
                    "device_interval": self.device_interval,
                }
            )
        )
        config_path.chmod(0o600)
        log = self.root / "server.log"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(TESTS_DIR), env.get("PYTHONPATH", "")) if p
        )
        with open(log, "wb") as err:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "servers.oauth_main", str(config_path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                start_new_session=True,
            )
        line = self._first_line()
        if not line.startswith("ready "):
            self.stop()
            raise ServerStartError(f"the authorization server did not start: {tail(log)}")
        self.port = int(line.split()[1])
        return self

    def _first_line(self) -> str:
        assert self._proc is not None
        assert self._proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._proc.stdout, selectors.EVENT_READ)
            if not selector.select(timeout=STARTUP_TIMEOUT):
                return ""
        return self._proc.stdout.readline().decode(errors="replace").strip()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            terminate(proc)
            if proc.stdout is not None:
                proc.stdout.close()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> OAuthServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------- control

    def _control(self, operation: str, **arguments: Any) -> Any:
        response = httpx2.post(
            f"{self.issuer}/control/{operation}",
            json=arguments,
            headers={CONTROL_HEADER: self._control_secret},
            timeout=30.0,
        )
        if response.status_code != 200:
            raise ServerError(f"control operation {operation} answered {response.status_code}")
        return response.json()["result"]

    def add_client(
        self,
        client_id: str,
        *,
        secret: str | None = None,
        redirect_uris: Sequence[str] = (),
        scope: str = "",
        whole_authorization: bool = False,
    ) -> None:
        """A client registered by an administrator: public without `secret`. Loopback
        redirect URIs match on any port (RFC 8252 section 7.3); an empty scope allows any.
        With `whole_authorization`, revoking any token issued to the client ends every grant
        its subject gave the client, as at Google."""
        self._control(
            "add_client",
            client_id=client_id,
            secret=secret,
            redirect_uris=list(redirect_uris),
            scope=scope,
            whole_authorization=whole_authorization,
        )

    def approve_device(self, user_code: str, subject: str) -> None:
        """The person typed `user_code` on another device and allowed access as `subject`."""
        self._control("approve_device", user_code=user_code, subject=subject)

    def deny_device(self, user_code: str) -> None:
        self._control("deny_device", user_code=user_code)

    def approve_authorizations_as(self, subject: str | None) -> None:
        """From now on the authorization endpoint redirects back at once with a code for
        `subject`; with None (the start state) it answers `access_denied`."""
        self._control("approve_authorizations_as", value=subject)

    def set_access_token_lifetime(self, seconds: int) -> None:
        """For tokens issued from now on (3600 s at start)."""
        self._control("set_access_token_lifetime", value=seconds)

    def set_device_code_lifetime(self, seconds: int) -> None:
        """For device codes issued from now on (600 s at start)."""
        self._control("set_device_code_lifetime", value=seconds)

    def set_refresh_rotation(self, rotate: bool) -> None:
        self._control("set_refresh_rotation", value=rotate)

    def revoke_refresh_tokens(self, subject: str) -> int:
        """Revoke every refresh token of `subject` (the access tokens stay valid until they
        expire, as at the big providers). Returns how many were revoked."""
        revoked: int = self._control("revoke_refresh_tokens", subject=subject)
        return revoked

    def live_refresh_tokens(self, subject: str) -> int:
        """How many refresh tokens of `subject` the server would still take: none once
        every grant of `subject` ended."""
        live: int = self._control("live_refresh_tokens", subject=subject)
        return live

    def mint_access_token(
        self,
        subject: str,
        *,
        audience: str,
        scopes: Sequence[str],
        expires_in: int = 300,
        client_id: str = "minted",
        key: str = "current",
    ) -> str:
        """A JWT access token made without a grant. `key="current"` signs with the served
        key (introspection answers it); `"unknown"` with a key never published (introspection
        answers it inactive). A negative `expires_in` makes one already expired."""
        token: str = self._control(
            "mint_access_token",
            subject=subject,
            audience=audience,
            scopes=list(scopes),
            expires_in=expires_in,
            client_id=client_id,
            key=key,
        )
        return token

    def rotate_signing_key(self) -> None:
        """A new key, served in the JWKS beside the earlier ones and signing from now on."""
        self._control("rotate_signing_key")

    def counts(self) -> dict[str, int]:
        """How many times each thing happened: tokens issued by grant (`code`, `device`,
        `refresh`), and `device_authorization`, `introspection`, `revocation`,
        `registration` requests; a key is absent until its first time."""
        found: dict[str, int] = self._control("counts")
        return found


DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def device_grant(
    server: OAuthServer,
    *,
    client_id: str,
    subject: str,
    scope: str = "",
    resource: str | None = None,
) -> dict[str, Any]:
    """Tokens for `subject` obtained as a client would, through the device grant (RFC 8628),
    with the person's approval played by the test: the token response, refresh token and all.
    `client_id` must be a public client of `server`."""
    form = {"client_id": client_id, "scope": scope}
    if resource is not None:
        form["resource"] = resource
    started = httpx2.post(server.device_authorization_endpoint, data=form, timeout=30.0)
    started.raise_for_status()
    codes = started.json()
    server.approve_device(codes["user_code"], subject)
    answer = httpx2.post(
        server.token_endpoint,
        data={"grant_type": DEVICE_GRANT, "device_code": codes["device_code"], **form},
        timeout=30.0,
    )
    answer.raise_for_status()
    tokens: dict[str, Any] = answer.json()
    return tokens
