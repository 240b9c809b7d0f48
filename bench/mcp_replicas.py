"""What serving MCP as replicas costs per call, against one process, in the same run.

    uv run --frozen python bench/mcp_replicas.py [--messages N] [--clients C] [--calls K]
                                                 [--rounds R]

One local account of N generated messages (`mailgen.py`, default 2,000) is synchronized
once into a private PostgreSQL (tests/servers). Three setups serve it, all started at once
and measured in the same run:

  one       one `mailfathom serve`, sessions and questions in its memory (the baseline)
  shared    one `mailfathom serve` with `[McpEndpoint] Replicas = true`: every request of a
            session is checked against the store and its last use written back
  balanced  the baseline's process behind nginx (tests/servers/nginx.py): what the
            balancer's hop costs alone
  replicas  two `shared` processes behind nginx alternating requests

For each setup and each protocol generation (the handshake generation, with a session; the
single-exchange 2026-07-28 one, with none) C clients call `list_emails` (a page of 10) K
times each, concurrently, with the official MCP client; every round trip is timed, session
set-up is not. Setups are measured in rotation for R rounds, so load from other work on the
machine falls on all of them alike. Printed: calls per second and p50/p95 per setup and
generation, and each as a ratio to `one` in the same round.

Two replicas on one 2-core machine share its cores: the figure that matters here is what the
shared state adds per call, not a speed-up.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO / "tests")]

import anyio  # noqa: E402
import httpx2  # noqa: E402
import read_latency_support as support  # noqa: E402
from machine import environment, log  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

GENERATIONS = {"handshake": "legacy", "single-exchange": "2026-07-28"}
SECRET_ENV = "MF_BENCH_STATE_SECRET"


def _config(data_dir: Path, database_url: str, key_digest: str, *, replicas: bool) -> str:
    folders = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\nRole = "{role}"\n'
        for name, role in support.FOLDER_ROLES.items()
    )
    shared = f'Replicas = true\nStateSecret = {{ Env = "{SECRET_ENV}" }}\n' if replicas else ""
    return f"""\
[Store]
DataDir = "{data_dir}"
DatabaseUrl = "{database_url}"

[Sync]
Enabled = false

[[Accounts]]
Id = "{support.ACCOUNT_ID}"
DisplayName = "Benchmark mailbox"
Kind = "local"
Addresses = ["{support.OWNER}"]
{folders}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
SessionsPerCaller = 1000
{shared}
[[McpEndpoint.Callers]]
Name = "bench"
Credential = "apiKey"
ApiKeySha256 = "{key_digest}"
"""


@contextmanager
def _served(config: Path, log_path: Path) -> Iterator[int]:
    port = support.free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)]
    argv += ["--port", str(port), "--no-sync", "--no-deliver"]
    with log_path.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=out)
    try:
        support.wait_for_port(port, process)
        yield port
    finally:
        support.stop_process(process)


async def _load(
    url: str, key: str, mode: str, clients: int, calls: int
) -> tuple[float, list[float]]:
    timings: list[float] = []

    async def one() -> None:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            await client.call_tool("list_emails", {"pageSize": 10})
            for _ in range(calls):
                started = time.perf_counter()
                result = await client.call_tool("list_emails", {"pageSize": 10})
                timings.append(time.perf_counter() - started)
                assert not result.is_error

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(clients):
            group.start_soon(one)
    return time.perf_counter() - started, timings


def _figures(elapsed: float, timings: list[float]) -> dict[str, float]:
    figures = support.summary_ms(timings)
    figures["calls_per_s"] = len(timings) / elapsed
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services
    from servers.nginx import RoundRobinBalancer
    from servers.postgres import PostgresServer

    work = Path(tempfile.mkdtemp(prefix="mf-bench-replicas-"))
    key = "bench-" + secrets.token_hex(16)
    digest = hashlib.sha256(key.encode()).hexdigest()
    os.environ[SECRET_ENV] = secrets.token_hex(32)
    results: dict[str, Any] = {"environment": environment({}), "arguments": vars(args)}
    with ExitStack() as stack:
        server = PostgresServer().start()
        stack.callback(server.stop)
        database = server.create_database("bench_replicas")
        data = work / "data"
        log(f"generating {args.messages} messages")
        support.write_maildir(data / "local" / support.ACCOUNT_ID, args.messages, args.seed)
        configs = {}
        for name, replicas in (("one", False), ("shared", True)):
            configs[name] = work / f"{name}.toml"
            configs[name].write_text(_config(data, database, digest, replicas=replicas))
        config = load_config(configs["one"])
        with Services.open(config) as services:
            services.account_synchronizer().run_once(config.accounts[0])
        log("synchronized; starting four serve processes and two nginx")
        ports = {
            "one": stack.enter_context(_served(configs["one"], work / "one.log")),
            "shared": stack.enter_context(_served(configs["shared"], work / "shared.log")),
        }
        pair = [stack.enter_context(_served(configs["shared"], work / f"r{n}.log")) for n in (1, 2)]
        alone = RoundRobinBalancer([ports["one"]]).start()
        stack.callback(alone.stop)
        ports["balanced"] = alone.port
        balancer = RoundRobinBalancer(pair).start()
        stack.callback(balancer.stop)
        ports["replicas"] = balancer.port
        runs: dict[str, dict[str, list[dict[str, float]]]] = {}
        for round_index in range(args.rounds):
            turn = round_index % len(ports)
            order = list(ports)[turn:] + list(ports)[:turn]
            for generation, mode in GENERATIONS.items():
                for setup in order:
                    url = f"http://127.0.0.1:{ports[setup]}/mcp"
                    elapsed, timings = anyio.run(_load, url, key, mode, args.clients, args.calls)
                    figures = _figures(elapsed, timings)
                    runs.setdefault(generation, {}).setdefault(setup, []).append(figures)
                    log(
                        f"round {round_index + 1} {generation:15} {setup:8} "
                        f"{figures['calls_per_s']:7.1f} calls/s  p50 {figures['p50_ms']:6.1f} ms"
                        f"  p95 {figures['p95_ms']:6.1f} ms"
                    )
        results["runs"] = runs
    print(json.dumps(results["arguments"]))
    print(f"{'generation':16} {'setup':9} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8}  ratio to one")
    for generation, setups in runs.items():
        base = setups["one"]
        for setup, measured in setups.items():
            rate = sum(f["calls_per_s"] for f in measured) / len(measured)
            p50 = sum(f["p50_ms"] for f in measured) / len(measured)
            p95 = sum(f["p95_ms"] for f in measured) / len(measured)
            ratios = [
                f["calls_per_s"] / b["calls_per_s"] for f, b in zip(measured, base, strict=True)
            ]
            print(
                f"{generation:16} {setup:9} {rate:8.1f} {p50:8.1f} {p95:8.1f}  "
                f"calls/s x{sum(ratios) / len(ratios):.2f}"
            )


if __name__ == "__main__":
    main()
