"""Fleet simulation: many accounts, sync and delivery workers killed at random, agents acting.

    uv run --frozen python bench/fleet_simulation.py [--minutes 10] [--servers 3]
        [--accounts-per-server 100] [--sync-workers 4] [--delivery-workers 2] [--polling]
    uv run --frozen python bench/fleet_simulation.py --curve [--workers 1,2,4] [--backlog 20]

The simulation starts, on loopback, `--servers` Dovecot servers holding `--accounts-per-server`
accounts each (a few messages each to begin with, more arriving at random during the run), one
PostgreSQL, the capture SMTP server every account sends through, a `mailfathom serve --no-sync
--no-deliver` the agents call over HTTP with the official MCP client (flag, archive, save a
draft and send it, send, keep a draft; each with a marker of its own), and the workers
(`mailfathom worker --role sync` and `--role delivery`). Every 2 to 6 seconds one worker, picked
at random, is killed with SIGKILL and one of the same role started in its place, for
`--minutes`. Then the chaos stops, the survivors are given a bounded time to converge, and the
run is judged by tests/fleet/checks.py, the same checks as tests/sync/test_fleet_chaos.py:
messages lost, duplicated, sent twice or never, changes not carried exactly once (the servers
read by an IMAP client of their own), folders whose store differs from the server. The exit
status is 1 when any of them is not 0.

--curve measures synchronization throughput instead: the same accounts with `--backlog`
messages each, synchronized into a fresh database by 1, 2 and 4 sync workers in turn (same
run, same mailboxes), messages stored per second from the workers' start to the last message
stored, and the ratios against one worker. Accounts poll rather than push there, so the
figure is the initial synchronization alone.

Figures are printed and written as JSON to bench/results/ (git-ignored) with the machine's
description (bench/machine.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent / "tests")]

from fleet_curve import curve  # noqa: E402
from machine import environment, log  # noqa: E402

from fleet.run import Scale, simulate  # noqa: E402
from servers.dovecot import DovecotServer  # noqa: E402
from servers.postgres import PostgresServer  # noqa: E402


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--accounts-per-server", type=int, default=100)
    parser.add_argument("--sync-workers", type=int, default=4)
    parser.add_argument("--delivery-workers", type=int, default=2)
    parser.add_argument("--lease-seconds", type=float, default=10.0)
    parser.add_argument("--converge-minutes", type=float, default=10.0)
    parser.add_argument("--polling", action="store_true", help="poll instead of IDLE")
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--curve", action="store_true", help="the scaling curve instead")
    parser.add_argument("--workers", default="1,2,4", help="--curve: worker counts")
    parser.add_argument("--backlog", type=int, default=20, help="--curve: messages each")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    return parser.parse_args()


@contextmanager
def servers(count: int, sessions: int) -> Iterator[tuple[list[DovecotServer], PostgresServer]]:
    with ExitStack() as stack:
        dovecots = [
            stack.enter_context(DovecotServer(process_limit=sessions)) for _ in range(count)
        ]
        postgres = stack.enter_context(PostgresServer())
        yield dovecots, postgres


def main() -> int:
    args = arguments()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mailfathom-fleet-"))
    results: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "environment": environment(
            {"dovecot": ["dovecot", "--version"], "postgres": ["postgres", "--version"]}
        ),
    }
    # Each account holds up to one session per folder, and a few more while a pass runs.
    sessions = 8 * args.accounts_per_server + 50
    started = time.monotonic()
    try:
        with servers(args.servers, sessions) as (dovecots, postgres):
            if args.curve:
                counts = [int(n) for n in args.workers.split(",")]
                results["curve"] = curve(
                    dovecots, postgres, work, args.accounts_per_server, args.backlog, counts, log
                )
            else:
                results["simulation"] = _simulate(args, dovecots, postgres, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results["wall_seconds"] = round(time.monotonic() - started, 1)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = RESULTS_DIR / f"fleet_simulation-{'curve-' if args.curve else ''}{stamp}.json"
    out.write_text(json.dumps(results, indent=2, default=str) + "\n", "utf-8")
    print(report(results))
    print(f"written to {out}")
    failed = results.get("simulation", {}).get("failed", [])
    return 1 if failed else 0


def _simulate(
    args: argparse.Namespace, dovecots: list[DovecotServer], postgres: PostgresServer, work: Path
) -> dict[str, Any]:
    from mailfathom.adapters.sql import migrate
    from mailfathom.adapters.sql.engine import create_store_engine

    url = postgres.create_database("fleet")
    engine = create_store_engine(url)
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    scale = Scale(
        per_server=args.accounts_per_server,
        sync_workers=args.sync_workers,
        delivery_workers=args.delivery_workers,
        seconds=args.minutes * 60,
        lease_seconds=args.lease_seconds,
        converge_seconds=args.converge_minutes * 60,
        push=not args.polling,
        seed=args.seed,
    )
    return simulate(scale, dovecots, url, work, log).figures


def report(results: dict[str, Any]) -> str:
    lines = []
    if "simulation" in results:
        s = results["simulation"]
        lines.append(
            f"fleet: {s['accounts']} accounts on {s['servers']} servers, "
            f"{s['chaos_seconds']} s of chaos, workers killed {s['workers_killed']}, "
            f"converged after {s['converge_wait_seconds']} s"
        )
        lines.append(f"agent acts {s['agent_acts']}; intents {s['agent_intents']}")
        for name, value in s["checks"].items():
            lines.append(f"  {name:<26} {value}")
        lines.append("PASSED" if not s["failed"] else f"FAILED: {s['failed']}")
        for name, examples in s["examples"].items():
            lines.append(f"  e.g. {name}: {examples}")
    if "curve" in results:
        lines.append("synchronization throughput (initial sync, messages stored per second)")
        for row in results["curve"]["rows"]:
            lines.append(
                f"  {row['workers']} sync workers: {row['messages']} messages in "
                f"{row['seconds']} s = {row['per_second']}/s, "
                f"x{row['ratio_to_one']} of one worker"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
