"""Running a check as an unprivileged user, so that what root is exempt from (file modes) is
tested where the suite runs as root too.

As root, the check runs in a forked child that gives up root for the `nobody` user and group
(65534) before calling it; the child needs no file of the project, having every module of the
parent already. Run by any other user, the check runs in this process, already unprivileged.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

NOBODY = 65534


def run_unprivileged(check: Callable[[], str]) -> str:
    """What `check` returns, or `"<exception class>: <message>"` for what it raises, with the
    check run without root's privileges."""
    if os.geteuid() != 0:
        return _outcome(check)
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            os.close(reading)
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)
            if os.geteuid() != NOBODY or os.getegid() != NOBODY:
                raise PermissionError("the child kept its privileges")
            os.write(writing, _outcome(check).encode("utf-8", "replace"))
            code = 0
        finally:
            os._exit(code)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        outcome = answer.read().decode("utf-8")
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the unprivileged child failed"
    return outcome


def _outcome(check: Callable[[], str]) -> str:
    try:
        return check()
    except Exception as error:
        return f"{type(error).__name__}: {error}"


@contextmanager
def shared_directory() -> Iterator[Path]:
    """A new directory that every user can enter, in the system's temporary directory (a
    test's own `tmp_path` sits under a directory only its owner enters)."""
    with tempfile.TemporaryDirectory(prefix="mailfathom-unprivileged-") as name:
        path = Path(name)
        path.chmod(0o755)
        yield path
