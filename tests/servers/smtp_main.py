"""A submission server for the tests: aiosmtpd with STARTTLS required and AUTH required.

Run as a process of its own (`python smtp_main.py CONFIG.json`), so that it outlives any
worker a test kills. Every accepted message is written to the spool as `<n>.eml` with
`<n>.json` beside it (envelope sender, recipients, the login used), the JSON last, so a
reader that sees the JSON sees the whole message.

`rules.json` in the spool directory, read at every command, lets a test make the server
answer a recipient (`"rcpt": {"address": code}`) or the end of DATA (`"data": code`) with a
code of its choosing; `"hang_data": true` keeps the message and never answers;
`"data_delay": seconds` keeps it and answers after that long. When `deliver_command` is
configured, each accepted message is also handed to it once per local
recipient (`{user}` replaced by the part before "@"), which is how the round-trip test gets
mail into Dovecot.

With `introspection` configured, the server also offers SASL XOAUTH2 and OAUTHBEARER
(RFC 7628): the bearer token is introspected (RFC 7662) at the authorization server, and the
login succeeds when the answer is `active` and its `username` is the SASL user. A refused
token is answered as each mechanism says: a 334 challenge carrying a base64 JSON error, the
client's reply (empty for XOAUTH2, %x01 for OAUTHBEARER), then 535. The JSON beside each
message records the mechanism and the user that authenticated.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import os
import ssl
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from aiosmtpd.smtp import MISSING, SMTP, AuthResult, Envelope, LoginPassword, Session

OAUTH_MECHANISMS = ["XOAUTH2", "OAUTHBEARER"]
TEMPORARY_FAILURE = "454 4.7.0 Temporary authentication failure"
# RFC 4954 section 4: an AUTH command line of at least 12288 octets; bearer tokens are long.
AUTH_LINE_LIMIT = 12288


class BearerSMTP(SMTP):
    """aiosmtpd's server with room for a bearer token in AUTH and in the reply to a
    challenge (which share the reader's line limit with DATA lines)."""

    line_length_limit = AUTH_LINE_LIMIT + 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command_size_limits["AUTH"] = AUTH_LINE_LIMIT


@dataclass(frozen=True)
class Login:
    """Who authenticated, and how: kept as the session's `auth_data`."""

    user: str
    mechanism: str


def parse_xoauth2(blob: bytes) -> tuple[str, str] | None:
    """`user=U^Aauth=Bearer T^A^A` (Google's and Microsoft's XOAUTH2)."""
    fields = dict(part.split("=", 1) for part in blob.decode().split("\x01") if "=" in part)
    auth = fields.get("auth", "")
    if "user" not in fields or not auth.startswith("Bearer "):
        return None
    return fields["user"], auth.removeprefix("Bearer ")


def parse_oauthbearer(blob: bytes) -> tuple[str | None, str] | None:
    """RFC 7628 section 3.1: a GS2 header (`n,a=U,`), then `^A`-separated key=value pairs,
    one of them `auth=Bearer T`. The authorization identity is optional."""
    header, _, rest = blob.decode().partition("\x01")
    parts = header.split(",")
    if len(parts) < 3 or parts[0] not in ("n", "y"):
        return None
    user = None
    if parts[1].startswith("a="):
        user = parts[1][2:].replace("=2C", ",").replace("=3D", "=")
    pairs = dict(p.split("=", 1) for p in rest.split("\x01") if "=" in p)
    auth = pairs.get("auth", "")
    if not auth.startswith("Bearer "):
        return None
    return user, auth.removeprefix("Bearer ")


class Spool:
    def __init__(self, config: dict[str, Any]) -> None:
        self.dir = Path(config["spool"])
        self.dir.mkdir(parents=True, exist_ok=True)
        self.users: dict[str, str] = config["users"]
        self.introspection: dict[str, Any] | None = config.get("introspection")
        self.deliver_command: list[str] | None = config.get("deliver_command")
        self.counter = itertools.count(1)

    def rules(self) -> dict[str, Any]:
        path = self.dir / "rules.json"
        try:
            loaded: dict[str, Any] = json.loads(path.read_text())
            return loaded
        except (OSError, ValueError):
            return {}

    def authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword):
            user = data.login.decode()
            if self.users.get(user) == data.password.decode():
                return AuthResult(success=True, auth_data=Login(user, mechanism))
        return AuthResult(success=False, handled=False)

    async def auth_XOAUTH2(self, server: SMTP, args: list[str]) -> AuthResult:
        return await self._bearer(server, args, "XOAUTH2")

    async def auth_OAUTHBEARER(self, server: SMTP, args: list[str]) -> AuthResult:
        return await self._bearer(server, args, "OAUTHBEARER")

    async def _bearer(self, server: SMTP, args: list[str], mechanism: str) -> AuthResult:
        if len(args) > 1:
            try:
                blob = base64.b64decode(args[1], validate=True)
            except binascii.Error:
                await server.push("501 5.5.2 Can't decode base64")
                return AuthResult(success=False, handled=True)
        else:
            answer = await server.challenge_auth("")
            if answer is MISSING:
                return AuthResult(success=False, handled=True)
            assert isinstance(answer, bytes)
            blob = answer
        parsed = parse_xoauth2(blob) if mechanism == "XOAUTH2" else parse_oauthbearer(blob)
        if parsed is None:
            await server.push("501 5.5.2 Malformed initial response")
            return AuthResult(success=False, handled=True)
        user, token = parsed
        try:
            owner = await self._token_owner(token)
        except httpx2.HTTPError:
            return AuthResult(success=False, handled=False, message=TEMPORARY_FAILURE)
        if owner is not None and user in (owner, None):
            return AuthResult(success=True, auth_data=Login(owner, mechanism))
        error = (
            {"status": "401", "schemes": "Bearer", "scope": "mail"}
            if mechanism == "XOAUTH2"
            else {"status": "invalid_token", "schemes": "bearer", "scope": "mail"}
        )
        # The client answers the error challenge (empty, or %x01); whatever it says, 535.
        if await server.challenge_auth(json.dumps(error)) is MISSING:
            return AuthResult(success=False, handled=True)
        return AuthResult(success=False, handled=False)

    async def _token_owner(self, token: str) -> str | None:
        """The `username` of an active token, by introspection; None when it is not active."""
        assert self.introspection is not None
        client_id, secret = self.introspection["client"]
        async with httpx2.AsyncClient(timeout=20.0) as client:
            response = await client.post(
                self.introspection["url"], data={"token": token}, auth=(client_id, secret)
            )
        response.raise_for_status()
        answer = response.json()
        if answer.get("active") is not True:
            return None
        owner = answer.get("username")
        return owner if isinstance(owner, str) else None

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: Any
    ) -> str:
        code = self.rules().get("rcpt", {}).get(address)
        if code is not None:
            return f"{code} {'Try again later' if code < 500 else 'No such mailbox'}"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        rules = self.rules()
        code = rules.get("data")
        if code is not None:
            return f"{code} {'Try again later' if code < 500 else 'Message refused'}"
        n = next(self.counter)
        content = envelope.original_content or b""
        (self.dir / f"{n}.eml").write_bytes(content)
        login = session.auth_data
        meta = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "login": login.user if isinstance(login, Login) else None,
            "mechanism": login.mechanism if isinstance(login, Login) else None,
            "tls": session.ssl is not None
            or (
                server.transport is not None and bool(server.transport.get_extra_info("ssl_object"))
            ),
        }
        tmp = self.dir / f".{n}.json"
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, self.dir / f"{n}.json")
        if self.deliver_command:
            for rcpt in envelope.rcpt_tos:
                user = rcpt.split("@", 1)[0]
                argv = [part.replace("{user}", user) for part in self.deliver_command]
                subprocess.run(argv, input=content, check=True, timeout=60)
        if rules.get("hang_data"):
            await asyncio.sleep(3600)
        # Kept, then answered late: a client that dies meanwhile never learns it was accepted.
        await asyncio.sleep(float(rules.get("data_delay", 0)))
        return "250 Message accepted"


async def main(config_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    spool = Spool(config)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(config["cert"], config["key"])
    loop = asyncio.get_running_loop()

    implicit = bool(config.get("implicit_tls"))

    def factory() -> SMTP:
        # With implicit TLS the whole connection is protected before SMTP begins (RFC 8314);
        # otherwise the client must say STARTTLS before anything else is accepted.
        return (BearerSMTP if spool.introspection else SMTP)(
            spool,
            hostname="smtp.test",
            tls_context=None if implicit else context,
            require_starttls=not implicit,
            auth_required=True,
            auth_require_tls=not implicit,
            authenticator=spool.authenticate,
            auth_exclude_mechanism=[] if spool.introspection else OAUTH_MECHANISMS,
        )

    server = await loop.create_server(
        factory, host="127.0.0.1", port=config["port"], ssl=context if implicit else None
    )
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
