"""Helpers shared by the test-server launchers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

LOOPBACK = "127.0.0.1"


class ServerError(RuntimeError):
    """A test server or one of its tools failed."""


class ServerStartError(ServerError):
    """A test server could not be started or did not become ready in time."""


class CommandError(ServerError):
    """A server tool (doveadm, initdb, pg_ctl, ...) failed or timed out."""


def free_port(host: str = LOOPBACK, attempts: int = 20) -> int:
    """Return a TCP port on ``host`` that was free a moment ago.

    The port is released before returning, so a caller that binds it later can
    still lose a race; launchers retry with a new port when that happens.
    """
    last_error: OSError | None = None
    for _ in range(attempts):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind((host, 0))
                port: int = sock.getsockname()[1]
                return port
        except OSError as exc:  # pragma: no cover - only on a starved host
            last_error = exc
            time.sleep(0.05)
    raise ServerStartError(f"could not find a free port on {host}: {last_error}")


def scratch_dir(prefix: str) -> Path:
    """Create a private temporary directory for a server.

    ``/tmp`` is preferred over ``$TMPDIR``: the servers' unprivileged accounts
    must be able to reach the directory, and Unix socket paths below it must
    stay under the 107-byte limit.
    """
    base = "/tmp" if os.path.isdir("/tmp") else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def tail(path: Path, lines: int = 40) -> str:
    """Return the last ``lines`` lines of a text file, or a note if it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"<{path} unreadable: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def run(
    args: list[str],
    *,
    timeout: float,
    what: str,
    cwd: Path | None = None,
    input_bytes: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run a helper command with a deadline and raise with its output if it fails."""
    try:
        proc = subprocess.run(
            args,
            input=input_bytes,
            stdin=None if input_bytes is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise CommandError(f"{what} did not finish within {timeout:.0f} s: {args}") from exc
    if proc.returncode != 0:
        out = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
        raise CommandError(f"{what} failed with exit code {proc.returncode}: {args}\n{out}")
    return proc


def terminate(proc: subprocess.Popen[bytes], *, grace: float = 10.0) -> None:
    """Stop a process started by a launcher: SIGTERM, then SIGKILL after ``grace`` seconds.

    The process was started in its own session, so its process group id is its pid;
    the SIGKILL fallback goes to that group so no helper process outlives it.
    """
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (and is not a zombie we could reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # The state field follows the parenthesised command name.
    state = status.rsplit(")", 1)[-1].split()[0:1]
    return state != ["Z"]
