"""Start and stop the test submission server (`smtp_main.py`) by its pid.

The server requires STARTTLS before anything else and AUTH before MAIL; its certificate is
issued by a throwaway authority made with `trustme`, which the clients under test are told
to trust (an `ssl.SSLContext`, or `SSL_CERT_FILE` for a process of their own).
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme

from servers._common import ServerStartError, free_port, scratch_dir, tail, terminate
from servers.oauth import OAuthServer

STARTUP_TIMEOUT = 30.0


@dataclass(frozen=True)
class Received:
    mail_from: str
    rcpt_tos: list[str]
    login: str | None
    tls: bool
    content: bytes
    mechanism: str | None = None


class SmtpServer:
    host = "127.0.0.1"

    def __init__(
        self,
        users: dict[str, str],
        deliver_command: list[str] | None = None,
        *,
        implicit_tls: bool = False,
        oauth: OAuthServer | None = None,
    ) -> None:
        """`users` maps a login to its password. With `oauth`, XOAUTH2 and OAUTHBEARER are
        offered too, their tokens introspected at that authorization server."""
        self.users = users
        self.oauth = oauth
        self.implicit_tls = implicit_tls
        self.deliver_command = deliver_command
        self.port = 0
        self.root = scratch_dir("mailfathom-smtp-")
        self.spool = self.root / "spool"
        authority = trustme.CA()
        certificate = authority.issue_cert("127.0.0.1", "localhost", "smtp.test")
        self.ca_path = self.root / "ca.pem"
        authority.cert_pem.write_to_path(str(self.ca_path))
        certificate.private_key_and_cert_chain_pem.write_to_path(str(self.root / "server.pem"))
        self._proc: subprocess.Popen[bytes] | None = None

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_path))

    def start(self) -> SmtpServer:
        self.port = free_port()
        config = {
            "port": self.port,
            "spool": str(self.spool),
            "users": self.users,
            "cert": str(self.root / "server.pem"),
            "key": str(self.root / "server.pem"),
            "deliver_command": self.deliver_command,
            "implicit_tls": self.implicit_tls,
            "introspection": None
            if self.oauth is None
            else {
                "url": self.oauth.introspection_endpoint,
                "client": list(self.oauth.introspection_client),
            },
        }
        config_path = self.root / "config.json"
        config_path.write_text(json.dumps(config))
        log = self.root / "server.log"
        with open(log, "wb") as out:
            self._proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).with_name("smtp_main.py")), str(config_path)],
                stdout=subprocess.PIPE,
                stderr=out,
            )
        assert self._proc.stdout is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        line = b""
        while time.monotonic() < deadline and self._proc.poll() is None:
            line = self._proc.stdout.readline()
            if line.strip() == b"ready":
                return self
        self.stop()
        raise ServerStartError(f"the test SMTP server did not start: {tail(log)}")

    def stop(self) -> None:
        if self._proc is not None:
            terminate(self._proc)
            self._proc = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def set_rules(self, **rules: Any) -> None:
        self.spool.mkdir(parents=True, exist_ok=True)
        path = self.spool / "rules.json"
        tmp = self.spool / ".rules.json"
        tmp.write_text(json.dumps(rules))
        tmp.replace(path)

    def received(self) -> list[Received]:
        found: list[Received] = []
        if not self.spool.exists():
            return found
        for meta_path in sorted(self.spool.glob("[0-9]*.json"), key=lambda p: int(p.stem)):
            meta = json.loads(meta_path.read_text())
            content = meta_path.with_suffix(".eml").read_bytes()
            found.append(Received(content=content, **meta))
        return found

    def clear(self) -> None:
        for path in self.spool.glob("[0-9]*.*"):
            path.unlink()
        self.set_rules()
