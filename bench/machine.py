"""What every benchmark records about the machine it ran on, and its progress lines."""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def stores(work: Path, postgres: bool, database: str) -> Iterator[list[tuple[str, str]]]:
    """(label, URL) of the stores a benchmark measures: a SQLite file in `work`, and with
    `postgres` a database of a private PostgreSQL server (tests/servers), stopped after."""
    from mailfathom.adapters.sql.engine import sqlite_url

    found = [("sqlite", sqlite_url(work / "store.sqlite3"))]
    server = None
    if postgres:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from servers.postgres import PostgresServer

        server = PostgresServer().start()
        found.append(("postgresql", server.create_database(database)))
    try:
        yield found
    finally:
        if server is not None:
            server.stop()


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def tool_version(args: list[str]) -> str:
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=10, check=False)
    except OSError:
        return "unavailable"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else ""


def environment(tools: Mapping[str, list[str]]) -> dict[str, Any]:
    """CPU, memory, load, versions, and the first line of `--version` of each tool."""
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import sqlalchemy
    import sqlean

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_mb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20,
        "loadavg_at_start": os.getloadavg(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "sqlite": sqlean.sqlite_version,
        "sqlalchemy": sqlalchemy.__version__,
        **{name: tool_version(args) for name, args in tools.items()},
    }


def _spin(seconds: float) -> float:
    """Work done per second of this process's CPU time, spinning for `seconds` of it."""
    import time

    start = time.process_time()
    done = 0
    while time.process_time() - start < seconds:
        for _ in range(10_000):
            done += 1
    return done / (time.process_time() - start)


def busy_cores_speed(rounds: int = 3, seconds: float = 2.0) -> dict[str, Any]:
    """How fast a core works while every core is busy, against one core busy alone: the same
    spinning loop in one process, then in one process per core at once, `rounds` times in
    turn. A ratio under 1 means a CPU second buys less work when the cores are all busy
    (cores sharing a physical core or its cache, a clock that slows with the load, a host's
    other guests), so CPU per call measured with every core busy is that much higher."""
    from concurrent.futures import ProcessPoolExecutor

    cores = os.cpu_count() or 1
    alone: list[float] = []
    together: list[float] = []
    with ProcessPoolExecutor(cores) as pool:
        for _ in range(rounds):
            alone.append(pool.submit(_spin, seconds).result())
            together.extend(f.result() for f in [pool.submit(_spin, seconds) for _ in range(cores)])
    one = sorted(alone)[len(alone) // 2]
    all_busy = sorted(together)[len(together) // 2]
    return {
        "cores": cores,
        "work_per_cpu_second_alone": alone,
        "work_per_cpu_second_all_busy": together,
        "ratio": all_busy / one,
    }
