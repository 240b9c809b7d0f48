"""What a key created in the console costs the MCP endpoint per request, and what keeping a
tool call costs per call, against the cheapest way of doing each.

    uv run python bench/caller_keys.py [--requests N] [--postgres]

Per store (the embedded SQLite file, and with --postgres a private PostgreSQL server):
admitting a console key (`CallerKeys.admit`: the key's shape, one read by identifier, the
digest compared) against admitting a key configured in the file (`AdmissionGate.admit`: the
digest compared in memory), N requests each way; and keeping a tool call
(`ToolCalls.record`: the insert and the trim to the newest 10,000, with 10,000 already
kept) against the bare insert of the same row. Printed: medians in microseconds and their
ratios. Nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

from machine import log, stores  # noqa: E402

from mailfathom.adapters.sql import migrate  # noqa: E402
from mailfathom.adapters.sql.caller_keys import SqlApiKeys, SqlToolCalls  # noqa: E402
from mailfathom.adapters.sql.engine import create_store_engine  # noqa: E402
from mailfathom.adapters.sql.schema import console_tool_calls  # noqa: E402
from mailfathom.app.console.caller_keys import CallerKeys, NewKey, new_form_nonce  # noqa: E402
from mailfathom.app.console.tool_calls import KEPT, ToolCalls  # noqa: E402
from mailfathom.domain.api_keys import MOST_KEYS_PER_CALLER, key_digest  # noqa: E402
from mailfathom.domain.config import CallerEntry  # noqa: E402
from mailfathom.entrypoints.mcp.http_app import AdmissionGate  # noqa: E402


def _median_us(work: Callable[[], object], times: int) -> float:
    took: list[float] = []
    for _ in range(times):
        start = time.perf_counter()
        work()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1_000_000


def _bare_insert(engine: sa.Engine) -> Callable[[], None]:
    def insert() -> None:
        with engine.begin() as c:
            c.execute(
                sa.insert(console_tool_calls).values(
                    called_at=datetime.now(UTC),
                    tool="list_accounts",
                    caller="agent",
                    outcome="success",
                    code=None,
                    duration_us=1000,
                )
            )

    return insert


def _measure(label: str, url: str, requests: int) -> None:
    engine = create_store_engine(url)
    try:
        migrate.upgrade(engine)
        file_key = "mf-file-key-of-the-bench"
        entries = [CallerEntry("agent", key_digest(file_key)), CallerEntry("other", None)]
        keys = CallerKeys(SqlApiKeys(engine), entries)
        # The entry's last active key is the one admitted, found among as many as it holds.
        for _ in range(MOST_KEYS_PER_CALLER - 1):
            keys.create("agent", new_form_nonce(), datetime.now(UTC))
        made = keys.create("agent", new_form_nonce(), datetime.now(UTC))
        assert isinstance(made, NewKey)
        gate = AdmissionGate(lambda *_: None, entries)  # type: ignore[arg-type]
        header = f"Bearer {file_key}"
        by_file = _median_us(lambda: gate.admit(header, "127.0.0.1"), requests)
        by_store = _median_us(lambda: keys.admit(made.key), requests)

        calls = ToolCalls(SqlToolCalls(engine))
        log(f"{label}: keeping {KEPT} calls first")
        for _ in range(KEPT):
            calls.record("list_accounts", "agent", "success", None, 0.001)
        kept = _median_us(
            lambda: calls.record("list_accounts", "agent", "success", None, 0.001), requests
        )
        bare = _median_us(_bare_insert(engine), requests)
    finally:
        engine.dispose()
    print(
        f"{label}: admission median: file key {by_file:.1f} us, console key {by_store:.1f} us "
        f"(ratio {by_store / by_file:.1f}x); keeping a call median {kept:.1f} us against a "
        f"bare insert {bare:.1f} us (ratio {kept / bare:.2f}x); {requests} each"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--postgres", action="store_true", help="measure PostgreSQL as well")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="caller-keys-") as scratch,
        stores(Path(scratch), args.postgres, "caller_keys_bench") as found,
    ):
        for label, url in found:
            _measure(label, url, args.requests)


if __name__ == "__main__":
    main()
