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
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session


class Spool:
    def __init__(self, config: dict[str, Any]) -> None:
        self.dir = Path(config["spool"])
        self.dir.mkdir(parents=True, exist_ok=True)
        self.users: dict[str, str] = config["users"]
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
                return AuthResult(success=True, auth_data=user)
        return AuthResult(success=False, handled=False)

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
        meta = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": list(envelope.rcpt_tos),
            "login": session.auth_data,
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
        return SMTP(
            spool,
            hostname="smtp.test",
            tls_context=None if implicit else context,
            require_starttls=not implicit,
            auth_required=True,
            auth_require_tls=not implicit,
            authenticator=spool.authenticate,
        )

    server = await loop.create_server(
        factory, host="127.0.0.1", port=config["port"], ssl=context if implicit else None
    )
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
