"""Where one MCP call's time goes: the served app driven in this process, profiled.

    uv run python bench/mcp_call_profile.py CONFIG CALLS.json KEY OUT_PREFIX [--calls N]

Used by `mcp_throughput.py --profile` on its deployment and its mix of calls. The app
`serve` would serve (admission, sessions, the MCP SDK, our tools) is driven over ASGI with
`clients` concurrent callers, without sockets, and profiled with cProfile in the event
loop's thread and in each worker thread the tools run in, by each thread's CPU time (by the
wall clock, waits included, with --wall). Printed and written: the
functions by own time and by cumulative time, and the share of the calls' wall time spent
in each of a few families (the SDK's dispatch and validation, our use cases, the database
driver, pydantic, JSON), and the statements our code sent per call (counted by a SQLAlchemy
listener: the pool's ping and the driver's own `BEGIN` are not among them).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import sys
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from mcp_throughput import PROTOCOL, request_body  # noqa: E402


async def drive(
    app: Any, key: str, calls: list[dict[str, Any]], count: int, clients: int, sent: list[int]
) -> float:
    """Wall seconds of all calls but the first; `sent` counts the statements from then."""
    import httpx2

    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Mcp-Protocol-Version": PROTOCOL,
    }
    transport = httpx2.ASGITransport(app=app)
    next_call = iter(range(count))
    async with (
        app.router.lifespan_context(app),
        httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8625") as http,
    ):

        async def client(calls_made: int | None = None) -> None:
            for made, number in enumerate(next_call, start=1):
                call = calls[number % len(calls)]
                sent = {**headers, "Mcp-Method": "tools/call", "Mcp-Name": call["name"]}
                answer = await http.post("/mcp", content=request_body(call, number), headers=sent)
                if answer.status_code != 200 or answer.json()["result"].get("isError"):
                    raise RuntimeError(f"{call['name']}: {answer.text[:300]}")
                if made == calls_made:
                    return

        await client(1)  # one call first: what is made once is not in the figures
        sent[0] = 0
        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("calls")
    parser.add_argument("key")
    parser.add_argument("out")
    parser.add_argument("--calls-made", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument(
        "--wall",
        action="store_true",
        help="time by the wall clock (waits included) instead of each thread's CPU time",
    )
    args = parser.parse_args()

    import sqlalchemy as sa

    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services
    from mailfathom.domain.request_bounds import tool_request_octets
    from mailfathom.entrypoints.mcp.assemble import build_server
    from mailfathom.entrypoints.mcp.http_app import build_http_app

    statements = [0]

    def count(*_: Any) -> None:
        statements[0] += 1

    sa.event.listen(sa.Engine, "before_cursor_execute", count)
    config = load_config(Path(args.config))
    calls = json.loads(Path(args.calls).read_text())
    profiles: list[cProfile.Profile] = []
    # Each thread's own CPU time by default: what a call costs the machine, without the
    # time a thread spends waiting for the database, a lock or the next request.
    timer = time.perf_counter if args.wall else time.thread_time

    def start_in_thread(*_: Any) -> None:
        # Called once in each new thread: enabling the profile replaces this hook there.
        profile = cProfile.Profile(timer)
        profiles.append(profile)
        profile.enable()

    with Services.open(config, migrate_schema=False) as services:
        server = build_server(services)
        app = build_http_app(
            server,
            config.mcp,
            services.download(),
            keys=services.caller_access().keys.admit,
            max_body_octets=tool_request_octets(config.mail_delivery.max_body_characters),
        )
        main_profile = cProfile.Profile(timer)
        threading.setprofile(start_in_thread)
        main_profile.enable()
        wall = asyncio.run(drive(app, args.key, calls, args.calls_made, args.clients, statements))
        main_profile.disable()
        threading.setprofile(None)
        for profile in profiles:
            profile.disable()
    stats = pstats.Stats(main_profile)
    for profile in profiles:
        stats.add(profile)
    text = io.StringIO()
    stats.stream = text  # type: ignore[attr-defined]
    per_call = wall / args.calls_made * 1000
    rate = args.calls_made / wall
    print(f"{args.calls_made} calls in {wall:.2f} s: {rate:.1f} calls/s", file=text)
    print(f"({per_call:.2f} ms of one profiled process per call)", file=text)
    timed = max(1, args.calls_made - 1)
    print(f"{statements[0] / timed:.2f} statements per call", file=text)
    stats.sort_stats("tottime").print_stats(45)
    stats.sort_stats("cumulative").print_stats(90)
    Path(args.out + ".txt").write_text(text.getvalue())
    stats.dump_stats(args.out + ".pstats")
    print(text.getvalue()[:6000])


if __name__ == "__main__":
    main()
