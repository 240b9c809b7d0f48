"""A command run on a pseudo-terminal, as an operator's shell runs it: its standard input,
output and error are the terminal, so it prompts and draws as it would for a person."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

DEADLINE = 180.0
# Control sequences (colours, cursor moves of the progress bars) and carriage returns.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\r")


def _take_terminal() -> None:
    """In the child, a session leader by now: standard input becomes its terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """A command whose standard input, output and error are one pseudo-terminal."""

    def __init__(
        self, argv: list[str], cwd: Path, env: dict[str, str], *, controlling: bool = False
    ) -> None:
        """`controlling`: the terminal is the command's controlling terminal, in a session
        of its own, as a shell's is; Ctrl-C typed at it then reaches the command as SIGINT."""
        self._master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 220, 0, 0))
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=env,
                start_new_session=controlling,
                preexec_fn=_take_terminal if controlling else None,
            )
        finally:
            os.close(slave)
        self._received = bytearray()
        self._ended = False

    def _read(self, timeout: float) -> None:
        if self._ended:
            return
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self._master, 65536)
        except OSError as error:  # the last holder of the terminal's other side is gone
            if error.errno != errno.EIO:
                raise
            chunk = b""
        if chunk:
            self._received += chunk
        else:
            self._ended = True

    @property
    def text(self) -> str:
        return _CONTROL.sub("", self._received.decode("utf-8", "replace"))

    def read_until(self, condition: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + DEADLINE
        while not condition(self.text):
            assert self.process.poll() is None or not self._ended, f"{what}: it exited"
            assert time.monotonic() < deadline, f"{what} within {DEADLINE:g} s"
            self._read(0.2)
        return self.text

    def stop(self) -> str:
        """SIGTERM to the process by its id, then everything it wrote until it ended."""
        if self.process.poll() is None:
            self.process.terminate()
        deadline = time.monotonic() + 60
        while not self._ended and time.monotonic() < deadline:
            self._read(0.2)
        try:
            self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._master)
        return self.text

    def ended(self) -> int:
        """The exit status of the command, once it ended by itself, with all it wrote read."""
        deadline = time.monotonic() + DEADLINE
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"the command ended within {DEADLINE:g} s"
            self._read(0.2)
        while not self._ended and time.monotonic() < deadline:
            self._read(0.2)
        return self.process.returncode

    def type(self, keys: bytes) -> None:
        """Keys pressed at the terminal; Ctrl-C (\\x03) interrupts what runs in it."""
        os.write(self._master, keys)


def terminal_environment(**env: str) -> dict[str, str]:
    """This process's environment as a shell on an xterm would give it, with `env`."""
    environment = {k: v for k, v in os.environ.items() if k != "MAILFATHOM_LOG_LEVEL"}
    environment.update(TERM="xterm-256color", **env)
    return environment


@contextlib.contextmanager
def on_terminal(argv: list[str], cwd: Path, **env: str) -> Iterator[Terminal]:
    """`argv` started on a terminal of its own, stopped (SIGTERM) when the block ends."""
    terminal = Terminal(argv, cwd, terminal_environment(**env))
    try:
        yield terminal
    finally:
        terminal.stop()
