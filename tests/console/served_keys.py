"""`mailfathom serve` as an operator runs it, with the console beside the MCP endpoint: the
owner password set by `mailfathom console set-password`, a caller entry granted reading
only, and the owner signed in over real HTTP to create and revoke that entry's keys."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import lxml.html

import log_audit
from cli.operator_cli import command, local_config
from mcp_tests.deployment import _free_port, _wait_for_port

READER_ENTRY = f"""
[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{"1" * 64}"
Permissions = ["mailfathom.mail.read"]
Confirmation = "ask"
"""


@dataclass(frozen=True)
class Served:
    mcp_url: str
    origin: str
    password: str
    config: Path
    log: Path


@contextmanager
def served_with_console(root: Path) -> Iterator[Served]:
    """The deployment served until the block ends; stopped by its own process id."""
    password = "owner-" + uuid.uuid4().hex
    log_audit.register(password)
    mcp_port, console_port = _free_port(), _free_port()
    config = local_config(root, listen=f"127.0.0.1:{mcp_port}")
    with config.open("a", encoding="utf-8") as file:
        file.write(READER_ENTRY)
        file.write(f'\n[Console]\nEnabled = true\nListen = "127.0.0.1:{console_port}"\n')
    subprocess.run(
        command("console", "set-password", "--config", str(config)),
        cwd=root,
        input=password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    with serving(root, config, mcp_port, console_port) as log:
        yield Served(
            f"http://127.0.0.1:{mcp_port}/mcp",
            f"http://127.0.0.1:{console_port}",
            password,
            config,
            log,
        )


@contextmanager
def serving(root: Path, config: Path, *ports: int) -> Iterator[Path]:
    """`mailfathom serve` on `config` until the block ends, from the moment every one of
    `ports` listens; the path of what it writes. Stopped by its own process id."""
    log = root / "serve.out"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command("serve", "--config", str(config)),
            cwd=root,
            stdout=sink,
            stderr=sink,
            stdin=subprocess.DEVNULL,
        )
    try:
        for port in ports:
            _wait_for_port(port, process)
        yield log
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Owner:
    """The owner signed in to the served console with a client of their own."""

    def __init__(self, served: Served) -> None:
        self.origin = served.origin
        self.http = httpx2.Client(base_url=served.origin, timeout=30)
        form = self.http.get("/login")
        (csrf,) = lxml.html.fromstring(form.text).xpath('//input[@name="csrf"]/@value')
        signed_in = self.http.post(
            "/login",
            data={"csrf": csrf, "password": served.password},
            headers={"Origin": served.origin},
        )
        assert signed_in.status_code == 303, signed_in.status_code

    def page(self, path: str) -> lxml.html.HtmlElement:
        answer = self.http.get(path)
        assert answer.status_code == 200, answer.status_code
        return lxml.html.fromstring(answer.text)

    def create_key(self, caller: str) -> str:
        (form,) = self.page("/callers").xpath(
            f"//section[@id='caller-{caller}']//form[@class='create-key']"
        )
        fields = {i.get("name"): i.get("value") for i in form.xpath(".//input")}
        answer = self.http.post(form.get("action"), data=fields, headers={"Origin": self.origin})
        assert answer.status_code == 200, answer.status_code
        (key,) = lxml.html.fromstring(answer.text).xpath("//input[@id='new-key']/@value")
        log_audit.register(key)
        return str(key)

    def revoke(self, key: str) -> None:
        key_id = key.removeprefix("mf-k").split("-", 1)[0]
        (row,) = self.page("/callers").xpath(f"//tr[@id='key-{key_id}']")
        (action,) = row.xpath(".//form/@action")
        (csrf,) = row.xpath(".//input[@name='csrf']/@value")
        answer = self.http.post(action, data={"csrf": csrf}, headers={"Origin": self.origin})
        assert answer.headers["location"] == "/callers?done=revoked"

    def close(self) -> None:
        self.http.close()
