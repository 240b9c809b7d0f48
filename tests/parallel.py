"""What keeps the suite correct when pytest-xdist runs it in several worker processes.

`scripts/test` runs the suite with `--dist loadfile`: each worker is a pytest session of its
own, with its own session-scoped servers (Dovecot, PostgreSQL, the SMTP and model provider
test servers, Chromium), each on a port it chose when it started, and the tests of one file
stay in one worker, so a module-scoped deployment is built once, as in a run without workers.
(`--dist loadgroup` cannot serve: with pytest 9.2 the group it writes into a test's id is
lost, and it hands out single tests.)

What a run writes outside a test's own temporary directory is named after the worker
(`worker_name`): the log copy the audit reads (tests/log_audit.py), Chromium's log.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

WORKER_ENV = "PYTEST_XDIST_WORKER"
LOG_COPY_ENV = "MAILFATHOM_LOG_COPY"


def worker_name() -> str | None:
    """`gw0`, `gw1`, ... in an xdist worker; None in a run without workers and in the
    process that hands tests out to them."""
    return os.environ.get(WORKER_ENV) or None


def per_worker(path: Path) -> Path:
    """`path`, or beside it a name carrying the worker's, so two workers never share it."""
    worker = worker_name()
    if worker is None:
        return path
    return path.with_name(f"{path.stem}-{worker}{path.suffix}")


def own_log_copy() -> Path:
    """The file this process copies every log line to, set in `MAILFATHOM_LOG_COPY` for the
    processes the tests start: a new one unless the variable names one, and in an xdist
    worker a file of the worker's own beside it, so that the audit of a test reads only the
    lines of tests this worker ran."""
    if LOG_COPY_ENV not in os.environ:
        handle, name = tempfile.mkstemp(prefix="mailfathom-test-logs-", suffix=".log")
        os.close(handle)
        os.environ[LOG_COPY_ENV] = name
    path = per_worker(Path(os.environ[LOG_COPY_ENV]))
    os.environ[LOG_COPY_ENV] = str(path)
    return path
