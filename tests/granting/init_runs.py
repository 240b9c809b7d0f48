"""`mailfathom init --provider` run as a process without a terminal, its output read line by
line while it waits for the person, as an operator watching it would."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from servers.dovecot import ImapAccount
from servers.oauth import OAuthServer
from waiting import wait_for

USER_CODE = re.compile(r"enter the code (\S+)")
SCOPES = ("mail.imap", "mail.smtp")


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


class CommandRun:
    """A command started with its standard input closed and `CI=true`; `stdout` grows as
    the command prints."""

    def __init__(self, cwd: Path, args: Sequence[str], env: dict[str, str] | None = None) -> None:
        self._lines: list[str] = []
        self._errors: list[str] = []
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", *args],
            cwd=cwd,
            env={**os.environ, "CI": "true", **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._readers = [
            threading.Thread(target=_read, args=(stream, into), daemon=True)
            for stream, into in (
                (self._proc.stdout, self._lines),
                (self._proc.stderr, self._errors),
            )
        ]
        for reader in self._readers:
            reader.start()

    @property
    def stdout(self) -> str:
        return "\n".join(self._lines)

    def printed(self, pattern: re.Pattern[str], what: str) -> str:
        """The first group of the first line matching `pattern`, once it is printed."""

        def found() -> str | None:
            for line in list(self._lines):
                match = pattern.search(line)
                if match:
                    return match.group(1)
            assert self._proc.poll() is None or self._readers[0].is_alive(), (
                self.stdout + "\n".join(self._errors)
            )
            return None

        return wait_for(found, what, timeout=60)

    def user_code(self) -> str:
        return self.printed(USER_CODE, "the user code was printed")

    def authorization_url(self, endpoint: str) -> str:
        """The address the person is told to open, which starts with `endpoint`."""
        return self.printed(re.compile(rf"^({re.escape(endpoint)}\?\S+)$"), "the URL was printed")

    def interrupt(self) -> None:
        """Ctrl-C: SIGINT to the command, by its process id."""
        self._proc.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 120) -> Finished:
        returncode = self._proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=10)
        return Finished(returncode, self.stdout, "\n".join(self._errors))


def _read(stream: IO[str], into: list[str]) -> None:
    for line in stream:
        into.append(line.rstrip("\n"))


def init_run(cwd: Path, args: Sequence[str], env: dict[str, str] | None = None) -> CommandRun:
    return CommandRun(cwd, ["init", *args], env)


def generic_flags(
    server: OAuthServer, client_id: str, account: ImapAccount, config: Path
) -> list[str]:
    return [
        "--non-interactive",
        "--config", str(config),
        "--provider", "generic-oauth",
        "--issuer", server.issuer,
        *(arg for scope in SCOPES for arg in ("--scope", scope)),
        "--client-id", client_id,
        "--imap-host", account.host,
        "--imap-port", str(account.port),
        "--imap-security", "none",
        "--imap-user", account.username,
    ]  # fmt: skip


def init_by_device(
    server: OAuthServer,
    client_id: str,
    account: ImapAccount,
    root: Path,
    *extra: str,
    env: dict[str, str] | None = None,
) -> tuple[Path, Finished]:
    """`init --provider generic-oauth` with the device flow, the person approving as the
    account's user; the configuration's path and what the command printed."""
    config = root / "mailfathom.toml"
    run = init_run(root, [*generic_flags(server, client_id, account, config), *extra], env)
    server.approve_device(run.user_code(), account.username)
    done = run.finish()
    assert done.returncode == 0, done.stdout + done.stderr
    return config, done
