"""`mailfathom worker` processes over accounts of the test Dovecot and one PostgreSQL store:
the configuration they share, starting them, and stopping or killing them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import IO

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import work_leases
from servers.dovecot import ImapAccount

LEASE_SECONDS = 1.5


def secret_env(index: int) -> str:
    return f"MF_WORKERS_TEST_SECRET_{index}"


def write_config(
    root: Path,
    database_url: str,
    accounts: list[ImapAccount],
    *,
    archive: bool = False,
    lease_seconds: float = LEASE_SECONDS,
    served: bool = False,
) -> Path:
    """A deployment over `accounts` (ids a0, a1, ...), synchronized by push, with short
    leases (unless `lease_seconds` says otherwise); each account's password is read from its
    own environment variable. `served`: with an MCP endpoint for `serve` (no credential)."""
    parts = [
        f'[Store]\nDataDir = "{root / "data"}"\nDatabaseUrl = "{database_url}"\n',
        f"[Sync]\nLeaseSeconds = {lease_seconds}\n",
    ]
    if served:
        parts.append(
            '[McpEndpoint]\nEnabled = true\n\n[[McpEndpoint.Callers]]\nName = "local"\n'
            'Credential = "none"\n'
        )
    for index, account in enumerate(accounts):
        os.environ[secret_env(index)] = account.password
        parts.append(
            f"""[[Accounts]]
Id = "a{index}"
Kind = "imap"
SyncMode = "push"
PollIntervalSeconds = 3600

[Accounts.Imap]
Host = "{account.host}"
Port = {account.port}
Username = "{account.username}"
Tls = "none"
Secret = {{ Env = "{secret_env(index)}" }}

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""
        )
        if archive:
            parts.append('[[Accounts.Folders]]\nRemote = "Archive"\nRole = "Archive"\n')
    path = root / "mailfathom.toml"
    path.write_text("\n".join(parts), "utf-8")
    return path


def start_worker(
    config: Path,
    name: str,
    *roles: str,
    env: Mapping[str, str] | None = None,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """A worker of `roles` (default sync) in a session of its own; `log` keeps what it writes
    on stderr (its log lines), else nothing is kept."""
    arguments = [arg for role in roles or ("sync",) for arg in ("--role", role)]
    with contextlib.ExitStack() as files:
        stderr = files.enter_context(log.open("ab")) if log is not None else subprocess.DEVNULL
        return _popen(config, name, arguments, env, stderr)


def start_continuous_sync(config: Path) -> subprocess.Popen[bytes]:
    """`mailfathom sync --continuous` in a session of its own, keeping nothing it writes."""
    return subprocess.Popen(
        [sys.executable, "-m", "mailfathom", "sync", "--config", str(config), "--continuous"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _popen(
    config: Path,
    name: str,
    arguments: list[str],
    env: Mapping[str, str] | None,
    stderr: int | IO[bytes],
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mailfathom",
            "worker",
            "--config",
            str(config),
            "--id",
            name,
            *arguments,
        ],
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL: the worker gives nothing up."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def stop(process: subprocess.Popen[bytes], timeout: float = 30.0) -> int:
    """SIGTERM, then SIGKILL if it does not end within `timeout`; answers the exit status."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill(process)
    return process.returncode


def holders(engine: sa.Engine) -> dict[str, str | None]:
    """Each account's lease holder, as the store has it."""
    with engine.connect() as c:
        rows = c.execute(
            sa.select(work_leases.c.subject, work_leases.c.holder).where(
                work_leases.c.kind == "account"
            )
        )
        return {str(row.subject): row.holder for row in rows}


def shares(engine: sa.Engine) -> Counter[str | None]:
    return Counter(holders(engine).values())
