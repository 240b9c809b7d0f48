"""A new user's path on a fresh clone, step by step as the README gives it: the demo, then
`mailfathom init` against a real IMAP and submission server, `sync`, `serve`, and a tool call
from the official MCP client configured only from what `init` printed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import uuid
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from log_audit import register_all
from mcp_tests.client import over_http
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dovecot import DovecotServer, ImapAccount
from servers.smtp import SmtpServer
from snippet_text import PrintedSnippets
from waiting import wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
SMTP_USER = "newcomer@example.org"
SMTP_PASSWORD = "fresh-clone-smtp-secret"


def _uv() -> str:
    found = shutil.which("uv") or str(Path.home() / ".local/bin/uv")
    if not Path(found).is_file():
        pytest.fail("uv is needed to install the clone (scripts/test installs it)", pytrace=False)
    return found


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (args[:4], done.stdout[-2000:], done.stderr[-2000:])
    return done


def _clone(into: Path) -> Path:
    head = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    subprocess.run(
        ["git", "clone", "--quiet", "--no-checkout", str(REPO_ROOT), str(into)],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["git", "-C", str(into), "checkout", "--quiet", "--detach", head],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    return into


def _port_closed(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture
def smtp() -> Any:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


def test_a_fresh_clone_goes_from_demo_to_an_agent_reading_its_own_mail(
    dovecot: DovecotServer, imap_account: ImapAccount, smtp: SmtpServer, tmp_path: Path
) -> None:
    subject = f"Welcome note {uuid.uuid4().hex[:8]}"
    register_all([subject, imap_account.password, SMTP_PASSWORD, SMTP_USER])
    note = EmailMessage()
    note["From"] = "someone@example.org"
    note["To"] = SMTP_USER
    note["Subject"] = subject
    note["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    note.set_content("A first message.\n")
    dovecot.save_message(imap_account.username, bytes(note))
    dovecot.create_folder(imap_account.username, "Sent")

    uv = _uv()
    cache = _run([uv, "cache", "dir"], tmp_path, dict(os.environ)).stdout.strip()
    clone = _clone(tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "UV_CACHE_DIR": cache,
        "PATH": f"{Path(uv).parent}:{os.environ.get('PATH', '')}",
        "MF_NEWCOMER_IMAP": imap_account.password,
        "MF_NEWCOMER_SMTP": SMTP_PASSWORD,
        "SSL_CERT_FILE": str(smtp.ca_path),
    }
    env.pop("VIRTUAL_ENV", None)

    # The README's first command, stopping after the demo synchronized.
    demo = _run(
        ["scripts/demo", "--no-serve", "--data-dir", str(home / "demo"), "--messages", "20",
         "--port", str(_free_port())],
        clone, env,
    )  # fmt: skip
    assert "MCP endpoint: http://127.0.0.1:" in demo.stdout

    config = home / "mailfathom.toml"
    port = _free_port()
    init = _run(
        [uv, "run", "--frozen", "mailfathom", "init", "--non-interactive",
         "--config", str(config),
         "--imap-host", imap_account.host, "--imap-port", str(imap_account.port),
         "--imap-security", "none", "--imap-user", imap_account.username,
         "--imap-secret-env", "MF_NEWCOMER_IMAP",
         "--smtp-host", smtp.host, "--smtp-port", str(smtp.port), "--smtp-security", "starttls",
         "--smtp-user", SMTP_USER, "--smtp-secret-env", "MF_NEWCOMER_SMTP",
         "--account-id", "mine", "--display-name", "My mail", "--mcp-port", str(port)],
        clone, env,
    )  # fmt: skip
    assert smtp.received() == []
    _run([uv, "run", "--frozen", "mailfathom", "sync", "--config", str(config)], clone, env)

    with (tmp_path / "serve.log").open("wb") as log:
        serve = subprocess.Popen(
            [uv, "run", "--frozen", "mailfathom", "serve", "--config", str(config)],
            cwd=clone, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )  # fmt: skip
    try:
        _wait_for_port(port, serve, timeout=120)
        url, headers = PrintedSnippets.parse(init.stdout).http_url_and_headers()
        assert url == f"http://127.0.0.1:{port}/mcp"

        async def listing(client: Client) -> Any:
            result = await client.call_tool("list_emails", {"accounts": ["mine"]})
            assert not result.is_error, result
            return result.structured_content

        page = over_http(url, None, listing, headers=headers)
        assert subject in [email["subject"] for email in page["emails"]]
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
    wait_for(lambda: _port_closed(port), "serve still listens after it was stopped")
    assert imap_account.password not in (tmp_path / "serve.log").read_text("utf-8", "replace")
