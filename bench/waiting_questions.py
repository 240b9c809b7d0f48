"""Reads of one caller while another caller's questions wait for a person.

    uv run python bench/waiting_questions.py [--waiting 50] [--reads 100] [--messages 300]
                                             [--tool list_emails|list_accounts]
                                             [--mode legacy|2026-07-28]

A local account is filled with generated sample mail and synchronized once, then served by
`mailfathom serve` (its own process; no synchronization, no delivery). Two callers reach it
with the official MCP client over Streamable HTTP, each with one session kept open:

  reader  calls the read tool (`list_emails` of the account's first page by default) one call
          after the other, each round trip timed
  asks    a caller whose entry has a person confirm every send; it starts `--waiting`
          `send_email` calls at once, and its elicitation callback holds every question
          unanswered

The reads are measured three times in one run: with no question waiting (baseline), while all
`--waiting` questions wait (each one put, none answered), and with none waiting again after
they were answered Cancel (drift). With the older protocol generation (`--mode legacy`, the
default) every waiting question is a call the server holds open; the server's worker threads
number 40, so 50 questions used to leave the reads queued behind them.

What is printed: p50/p95/mean per phase, and the ratio of the waiting phase's p50 to the
baseline's (the bound is 2.0). Results are written as JSON to bench/results/.
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
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import read_latency_support as support  # noqa: E402
from machine import environment, log  # noqa: E402

RESULTS_DIR = BENCH_DIR / "results"
WARM_UP = 30
BOUND = 2.0


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def config_text(data_dir: Path, keys: dict[str, str], waiting: int) -> str:
    return f"""
[Store]
DataDir = "{data_dir}"

[Sync]
Enabled = false

[MailDelivery]
HoldSeconds = 3600

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "local"
Addresses = ["desk@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "desk@example.org"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
ConfirmationTimeoutSeconds = 3600
QuestionsWaitingPerCaller = {max(waiting, 1)}

[[McpEndpoint.Callers]]
Name = "asks"
Credential = "apiKey"
ApiKeySha256 = "{_digest(keys["asks"])}"
Confirmation = "ask"

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{_digest(keys["reader"])}"
Permissions = ["mailfathom.mail.read"]
"""


def fill(config_path: Path, messages: int) -> None:
    """Sample mail in the account's inbox, synchronized into the store once."""
    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services

    config = load_config(config_path)
    with Services.open(config) as services:
        services.deliver_sample_mail("work", messages)
        services.account_synchronizer().run_once(config.accounts[0])


def start_server(config_path: Path, port: int, log_path: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    argv += ["--port", str(port), "--no-sync", "--no-deliver"]
    with log_path.open("ab") as handle:
        server = subprocess.Popen(argv, env=dict(os.environ), stdout=handle, stderr=handle)
    support.wait_for_port(port, server)
    return server


class HeldQuestions:
    """The asking caller's person: holds every question until released, then cancels."""

    def __init__(self) -> None:
        self.asked = 0
        self.released = anyio.Event()

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp.types import ElicitResult

        self.asked += 1
        await self.released.wait()
        return ElicitResult(action="accept", content={"choice": "cancel"})


async def timed_reads(call: Callable[[], Awaitable[Any]], count: int) -> list[float]:
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        result = await call()
        seconds.append(time.perf_counter() - started)
        if result.is_error:
            raise RuntimeError("a read failed")
    return seconds


async def until(condition: Callable[[], bool], what: str, deadline: float = 300.0) -> None:
    with anyio.move_on_after(deadline):
        while not condition():
            await anyio.sleep(0.02)
        return
    raise RuntimeError(f"{what} within {deadline:g} s")


async def measure(url: str, keys: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    arguments: dict[str, Any] = {"accounts": ["work"]} if args.tool == "list_emails" else {}
    limits = httpx2.Limits(max_connections=2 * args.waiting + 10)
    timeout = httpx2.Timeout(60, read=None)
    person = HeldQuestions()
    ended: list[str] = []
    async with (
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {keys['reader']}"}, timeout=timeout
        ) as reader_http,
        httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {keys['asks']}"}, timeout=timeout, limits=limits
        ) as asks_http,
        Client(streamable_http_client(url, http_client=reader_http)) as reader,
        Client(
            streamable_http_client(url, http_client=asks_http),
            mode=args.mode,
            elicitation_callback=person,
        ) as asking,
    ):

        async def read() -> Any:
            return await reader.call_tool(args.tool, arguments)

        async def send(n: int) -> None:
            result = await asking.call_tool(
                "send_email",
                {
                    "account": "work",
                    "to": ["guest@example.net"],
                    "subject": f"Waiting question {n}",
                    "plainTextBody": "Held for the benchmark.\n",
                    "idempotencyKey": f"bench-{n}-{secrets.token_hex(4)}",
                },
            )
            ended.append("refused" if result.is_error else str(result.structured_content))

        await timed_reads(read, WARM_UP)
        log(f"baseline: {args.reads} reads with no question waiting")
        baseline = await timed_reads(read, args.reads)
        async with anyio.create_task_group() as group:
            for n in range(args.waiting):
                group.start_soon(send, n)
            await until(lambda: person.asked == args.waiting, "every question was put")
            log(f"waiting: {args.reads} reads while {args.waiting} questions wait")
            unfinished_before = args.waiting - len(ended)
            waiting = await timed_reads(read, args.reads)
            unfinished_after = args.waiting - len(ended)
            person.released.set()
        log(f"after: {args.reads} reads once every question was answered")
        after = await timed_reads(read, args.reads)
    return {
        "baseline": support.summary_ms(baseline),
        "waiting": support.summary_ms(waiting),
        "after": support.summary_ms(after),
        "questions_waiting_throughout": min(unfinished_before, unfinished_after),
        "calls_ended_cancelled": sum(1 for e in ended if "cancelled" in e),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiting", type=int, default=50)
    parser.add_argument("--reads", type=int, default=100)
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--tool", choices=["list_emails", "list_accounts"], default="list_emails")
    parser.add_argument("--mode", choices=["legacy", "2026-07-28"], default="legacy")
    args = parser.parse_args()

    keys = {
        "asks": "bench-asks-" + secrets.token_hex(16),
        "reader": "bench-read-" + secrets.token_hex(16),
    }
    with tempfile.TemporaryDirectory(prefix="mf-waiting-") as work:
        root = Path(work)
        config_path = root / "mailfathom.toml"
        config_path.write_text(config_text(root / "data", keys, args.waiting), "utf-8")
        log(f"filling the inbox with {args.messages} sample messages")
        fill(config_path, args.messages)
        port = support.free_port()
        server = start_server(config_path, port, root / "server.log")
        try:
            figures = anyio.run(measure, f"http://127.0.0.1:{port}/mcp", keys, args)
        finally:
            support.stop_process(server)

    ratio = figures["waiting"]["p50_ms"] / figures["baseline"]["p50_ms"]
    drift = figures["after"]["p50_ms"] / figures["baseline"]["p50_ms"]
    results = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "arguments": vars(args),
        "environment": environment({}),
        **figures,
        "ratio_waiting_to_baseline_p50": ratio,
        "ratio_after_to_baseline_p50": drift,
    }
    RESULTS_DIR.mkdir(exist_ok=True)
    out = RESULTS_DIR / f"waiting_questions-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"
    out.write_text(json.dumps(results, indent=2), "utf-8")

    print(f"{args.tool}, {args.reads} reads per phase, {args.waiting} questions ({args.mode})")
    print(f"{'phase':<10} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for phase in ("baseline", "waiting", "after"):
        f = figures[phase]
        print(f"{phase:<10} {f['p50_ms']:8.2f} {f['p95_ms']:8.2f} {f['mean_ms']:8.2f}")
    print(
        f"questions still waiting through the whole waiting phase: "
        f"{figures['questions_waiting_throughout']} of {args.waiting}"
    )
    print(
        f"p50 ratio waiting / baseline: {ratio:.2f} (bound {BOUND:g}: "
        f"{'met' if ratio <= BOUND else 'not met'})"
    )
    print(f"p50 ratio after / baseline:   {drift:.2f}")
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
