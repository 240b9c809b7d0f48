"""MCP throughput benchmark: the reading tools at 1, 2 and 4 `serve` processes on PostgreSQL.

    uv run python bench/mcp_throughput.py [--processes 1,2,4] [--clients 30] [--seconds 20]
        [--messages 3000] [--accounts 3] [--database-url URL] [--profile]

A deployment on PostgreSQL (a private server started as tests/servers does, or the database
`--database-url` names, which must be empty) holds generated mail (see `mailgen.py`) in a few
local accounts, stored by one `mailfathom sync`. Then, in the same run and on that one store,
`mailfathom serve --processes N` is started for each N and put under the same load:

  - C clients, each one keep-alive HTTP/1.1 connection posting one call after the other
    (a closed loop), for T seconds after a warm-up of W seconds that is not counted;
  - every call a JSON-RPC `tools/call` of the single-exchange protocol generation (no
    session, each request on its own), with the caller's API key as a bearer credential;
  - a fixed mix of the reading tools with arguments taken from the store (the same
    sequence for every N): list_accounts, list_emails (first pages, a folder, a sender, a
    next page by cursor), get_email_content (one and three ids, a thread), search_emails.

The load runs in a process of its own on asyncio with h11, so that it costs little beside
the servers on a small machine. Before each load, a sample of the same calls is made with
the official MCP client and its answers compared with the raw ones (same structured
content), and every raw answer of the load is checked to be a success.

Printed: calls/s, p50, p95, p99 per N and the ratio of calls/s to one process, the
servers' CPU per call (user and system time of the serving processes, from /proc) and the
database's transactions and statements per call (`pg_stat_statements`, which the private
server loads; "-" on a server that does not) and its CPU per call (its processes' user and
system time, from /proc; "-" for a server on another machine).

The baseline, at each N unless --no-baseline: the same load with every call `list_accounts`,
against the MCP SDK alone (`mcp_bare_sdk.py`: one tool with a fixed answer, served by
uvicorn on N processes) and against our `serve`. The SDK's figures are the floor this machine
puts under any of ours; ours are reported as a share of them. The figures are written as
JSON to bench/results/ (which git ignores). With --profile, the same calls
are then made in one process under cProfile (`mcp_call_profile.py`), profile kept beside
the figures. With --work-dir and --database-url the deployment is kept and reused; --code DIR serves
another copy of src/ (an earlier commit's, `git archive`d) on the same deployment. With
--per-kind each kind of call of the mix is then measured alone on one process
(`mcp_call_kinds.py`); --against SRC measures that copy of src/ too, kind by kind in turn.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import read_latency_support as support  # noqa: E402
from machine import busy_cores_speed, environment, log  # noqa: E402
from mcp_call_kinds import measure_kinds, report_kinds  # noqa: E402

REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
PROTOCOL = "2026-07-28"
TARGET_CALLS_PER_S = 300.0
TARGET_P95_MS = 100.0
FOLDER_ROLES = support.FOLDER_ROLES


# --------------------------------------------------------------------------- the deployment


def config_text(data_dir: Path, database_url: str, accounts: list[str], port: int, key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    folders = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\nRole = "{role}"\n'
        for name, role in FOLDER_ROLES.items()
    )
    blocks = "".join(
        f'\n[[Accounts]]\nId = "{account}"\nDisplayName = "Mailbox {account}"\n'
        f'Kind = "local"\nAddresses = ["{account}@example.org"]\n{folders}'
        for account in accounts
    )
    return f"""\
[Store]
DataDir = "{data_dir}"
DatabaseUrl = "{database_url}"
{blocks}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{port}"
# Every count of processes (one included, for a like-for-like baseline) shares sessions and
# sealing keys through the store, as several processes must.
Replicas = true
StateSecret = {{ Env = "{STATE_SECRET_ENV}" }}

[[McpEndpoint.Callers]]
Name = "agents"
Credential = "apiKey"
ApiKeySha256 = "{digest}"
Permissions = ["mailfathom.mail.read"]
"""


def build(work: Path, database_url: str, accounts: int, messages: int, seed: int) -> dict[str, Any]:
    data = work / "data"
    names = [f"box{i}" for i in range(accounts)]
    key = secrets.token_hex(16)
    port = support.free_port()
    config = work / "mailfathom.toml"
    config.write_text(config_text(data, database_url, names, port, key), "utf-8")
    corpus = []
    for index, name in enumerate(names):
        share = messages // accounts + (1 if index < messages % accounts else 0)
        corpus.append(support.write_maildir(data / "local" / name, share, seed + index))
    log(f"wrote {sum(c['messages'] for c in corpus)} messages in {accounts} accounts")
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "mailfathom", "-q", "sync", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        cwd=str(work),
        env=code_env(work),
    )
    if out.returncode != 0:
        raise RuntimeError(f"the synchronization failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    log(f"synchronized in {time.perf_counter() - started:.1f} s")
    # A deployment under load has statistics: autovacuum gathers them within a minute or so of
    # a bulk load. Measured before that, PostgreSQL plans the tools' statements as if the
    # tables were empty (a listing read every message of its folders, a search ranked every
    # match), which is a passing state, not the deployment's.
    import psycopg

    with psycopg.connect(_conninfo(database_url), autocommit=True) as connection:
        connection.execute("ANALYZE")
    log("statistics gathered (ANALYZE)")
    return {
        "config": config,
        "port": port,
        "key": key,
        "accounts": names,
        "corpus": corpus,
        "database_url": database_url,
        # Kept with the deployment: the mix's cursors are sealed under it.
        "state_secret": secrets.token_hex(32),
    }


# --------------------------------------------------------------------------- the calls


def official_calls(url: str, key: str, calls: list[dict[str, Any]]) -> list[Any]:
    """The structured content of each call, made with the official MCP client."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run() -> list[Any]:
        headers = {"Authorization": f"Bearer {key}"}
        found = []
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http), mode=PROTOCOL) as client,
        ):
            for call in calls:
                result = await client.call_tool(call["name"], call["arguments"])
                if result.is_error:
                    raise RuntimeError(f"{call['name']} failed: {result.content}")
                found.append(result.structured_content)
        return found

    return anyio.run(run)


def workload(url: str, key: str, accounts: list[str], seed: int) -> list[dict[str, Any]]:
    """The calls of the mix, with arguments read from the store through the tools."""
    rng = random.Random(seed)
    first = official_calls(
        url,
        key,
        [
            {"name": "list_emails", "arguments": {"accounts": [a], "pageSize": 100}}
            for a in accounts
        ],
    )
    summaries = [e for page in first for e in page["emails"]]
    ids = [e["storedEmailId"] for e in summaries]
    threads = sorted({e["threadId"] for e in summaries if e.get("threadId")})
    senders = sorted({e["senderAddress"] for e in summaries if e.get("senderAddress")})
    cursors = [page["nextCursor"] for page in first if page.get("nextCursor")]
    words = ["review", "budget", "migration", "customer", "invoice", "Hopper", "offsite"]
    calls: list[dict[str, Any]] = []
    for _ in range(200):
        kind = rng.choices(
            ["accounts", "list", "list-folder", "list-sender", "list-next", "get1", "get3",
             "thread", "search"],
            weights=[5, 15, 10, 5, 5, 20, 10, 10, 20],
        )[0]  # fmt: skip
        if kind == "accounts":
            calls.append({"name": "list_accounts", "arguments": {}})
        elif kind == "list":
            calls.append({"name": "list_emails", "arguments": {"pageSize": 25}})
        elif kind == "list-folder":
            folder = rng.choice(["INBOX", "Archive", "Sent"])
            args = {"accounts": [rng.choice(accounts)], "folders": [folder], "pageSize": 25}
            calls.append({"name": "list_emails", "arguments": args})
        elif kind == "list-sender":
            args = {"senderAddress": rng.choice(senders), "pageSize": 10}
            calls.append({"name": "list_emails", "arguments": args})
        elif kind == "list-next" and cursors:
            args = {"accounts": [accounts[0]], "pageSize": 100, "cursor": cursors[0]}
            calls.append({"name": "list_emails", "arguments": args})
        elif kind == "get1":
            args = {"storedEmailIds": [rng.choice(ids)]}
            calls.append({"name": "get_email_content", "arguments": args})
        elif kind == "get3":
            args = {"storedEmailIds": rng.sample(ids, 3)}
            calls.append({"name": "get_email_content", "arguments": args})
        elif kind == "thread" and threads:
            args = {"threadId": rng.choice(threads)}
            calls.append({"name": "get_email_content", "arguments": args})
        elif kind == "search":
            query = " ".join(rng.sample(words, rng.choice([1, 1, 2])))
            calls.append({"name": "search_emails", "arguments": {"queryText": query}})
    return calls


def first_calls(setup: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """The mix, read from the store through one `serve` of the deployment."""
    first = subprocess.Popen(
        [sys.executable, "-m", "mailfathom", "serve", "--config", str(setup["config"])],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**code_env(setup["config"].parent), STATE_SECRET_ENV: setup["state_secret"]},
    )
    try:
        support.wait_for_port(setup["port"], first)
        url = f"http://127.0.0.1:{setup['port']}/mcp"
        return workload(url, setup["key"], setup["accounts"], seed)
    finally:
        support.stop_process(first)


def request_body(call: dict[str, Any], number: int) -> bytes:
    """A `tools/call` of the single-exchange generation, as the official client sends it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-throughput", "version": "1"},
    }
    params = {"name": call["name"], "arguments": call["arguments"], "_meta": meta}
    body = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
    return json.dumps(body, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- the load


async def one_client(
    port: int,
    key: str,
    bodies: list[tuple[str, bytes]],
    start: int,
    warm_until: float,
    stop_at: float,
    times: list[float],
    failures: list[str],
    made: list[int],
) -> None:
    import h11

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = h11.Connection(h11.CLIENT)
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Authorization", f"Bearer {key}"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("Mcp-Protocol-Version", PROTOCOL),
    ]
    index = start
    try:
        while (now := time.perf_counter()) < stop_at:
            name, body = bodies[index % len(bodies)]
            index += 1
            request = h11.Request(
                method="POST",
                target="/mcp",
                headers=[*headers, ("Mcp-Method", "tools/call"), ("Mcp-Name", name),
                         ("Content-Length", str(len(body)))],
            )  # fmt: skip
            writer.write(connection.send(request) + connection.send(h11.Data(data=body)))
            writer.write(connection.send(h11.EndOfMessage()))
            status, answer = 0, bytearray()
            while True:
                event = connection.next_event()
                if event is h11.NEED_DATA:
                    connection.receive_data(await reader.read(65536))
                elif isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.Data):
                    answer += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
            elapsed = time.perf_counter() - now
            connection.start_next_cycle()
            made.append(1)
            if now < warm_until:
                continue
            times.append(elapsed)
            if status != 200 or b'"isError":true' in answer or b'"error":' in answer[:200]:
                failures.append(f"{name}: HTTP {status}")
    finally:
        writer.close()


async def load(port: int, key: str, calls: list[dict[str, Any]], clients: int, warm: float,
               seconds: float) -> dict[str, Any]:  # fmt: skip
    bodies = [(c["name"], request_body(c, n)) for n, c in enumerate(calls)]
    times: list[float] = []
    failures: list[str] = []
    made: list[int] = []
    begun = time.perf_counter()
    warm_until = begun + warm
    stop_at = warm_until + seconds
    cpu = os.times()
    await asyncio.gather(
        *(
            one_client(port, key, bodies, i * 7, warm_until, stop_at, times, failures, made)
            for i in range(clients)
        )
    )
    spent = os.times()
    return {
        "times": times,
        "failures": failures,
        "calls_made": len(made),
        "seconds": seconds,
        "load_cpu_s": spent.user + spent.system - cpu.user - cpu.system,
    }


def child_load(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    found = asyncio.run(
        load(spec["port"], spec["key"], spec["calls"], spec["clients"], spec["warm"],
             spec["seconds"])
    )  # fmt: skip
    print(json.dumps(found))


# --------------------------------------------------------------------------- one run


def code_env(work: Path) -> dict[str, str]:
    """The environment every process of the run is started in: the copy of src/ taken at
    the start (see `read_latency_support.snapshot_code`) comes first on the path."""
    return {**os.environ, "PYTHONPATH": str(work / "code" / "src")}


STATE_SECRET_ENV = "MAILFATHOM_BENCH_STATE_SECRET"


def serve(config: Path, port: int, processes: int, log_path: Path, secret: str) -> Any:
    command = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)]
    command += ["--port", str(port)]
    if processes != 1:
        command += ["--processes", str(processes)]
    with log_path.open("ab") as out:
        env = {**code_env(config.parent), STATE_SECRET_ENV: secret}
        return subprocess.Popen(command, stdout=out, stderr=out, cwd=str(config.parent), env=env)


def measure(setup: dict[str, Any], calls: list[dict[str, Any]], processes: int, args: Any,
            work: Path) -> dict[str, Any]:  # fmt: skip
    port = setup["port"]
    process = serve(setup["config"], port, processes, work / "serve.log", setup["state_secret"])
    try:
        support.wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        sample = calls[:12]
        official = official_calls(url, setup["key"], sample)
        raw = [r["structuredContent"] for r in raw_answers(port, setup["key"], sample)]
        for call, theirs, ours in zip(sample, official, raw, strict=True):
            if _comparable(theirs) != _comparable(ours):
                where = _differences(_comparable(theirs), _comparable(ours))
                raise RuntimeError(f"a raw answer of {call['name']} differs at {where[:5]}")
        recorded = work / ANSWERS_FILE
        if not recorded.exists():
            answers = raw_answers(port, setup["key"], calls)
            kept = [{"name": c["name"], "result": r} for c, r in zip(calls, answers, strict=True)]
            recorded.write_text(json.dumps(kept))
        postmaster = _postmaster(setup["database_url"])
        database_cpu = _database_cpu(postmaster)
        server_cpu = _cpu_of_tree(process.pid)
        transactions = _transactions(setup["database_url"])
        statements = _statements(setup["database_url"])
        timed = _statement_times(setup["database_url"])
        found = run_load(port, setup["key"], calls, args, work)
        by_statement = _costliest(timed, _statement_times(setup["database_url"]))
        server_cpu = _cpu_of_tree(process.pid) - server_cpu
        database_after = _database_cpu(postmaster)
        transactions = _transactions(setup["database_url"]) - transactions
        after = _statements(setup["database_url"])
        statements = None if after is None or statements is None else after - statements
    finally:
        support.stop_process(process)
    return {
        **figures(processes, found, server_cpu),
        # Over the warm-up and the measured seconds alike, so a ratio to the calls of both.
        "transactions_per_call": transactions / max(1, found["calls_made"]),
        "statements_per_call": (
            None if statements is None else statements / max(1, found["calls_made"])
        ),
        # The statements that took the database the most time during the load (their text
        # as `pg_stat_statements` keeps it, values replaced by placeholders).
        "costliest_statements": by_statement,
        "database_cpu_ms_per_call": (
            None
            if database_cpu is None or database_after is None
            else (database_after - database_cpu) * 1000 / max(1, found["calls_made"])
        ),
    }


def run_load(port: int, key: str, calls: list[dict[str, Any]], args: Any,
             work: Path) -> dict[str, Any]:  # fmt: skip
    """The closed-loop load against the server on `port`, run in a process of its own."""
    spec = work / "load.json"
    spec.write_text(
        json.dumps(
            {"port": port, "key": key, "calls": calls, "clients": args.clients,
             "warm": args.warm, "seconds": args.seconds}
        )
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child-load", str(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"the load failed:\n{out.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if found["failures"]:
        raise RuntimeError(f"{len(found['failures'])} calls failed: {found['failures'][:5]}")
    return found


def figures(processes: int, found: dict[str, Any], server_cpu: float) -> dict[str, Any]:
    times = found["times"]
    return {
        "processes": processes,
        "calls": len(times),
        "calls_per_s": len(times) / found["seconds"],
        "p50_ms": support.percentile(times, 0.50) * 1000,
        "p95_ms": support.percentile(times, 0.95) * 1000,
        "p99_ms": support.percentile(times, 0.99) * 1000,
        "load_cpu_s": found["load_cpu_s"],
        "server_cpu_s": server_cpu,
        "server_cpu_ms_per_call": server_cpu * 1000 / max(1, found["calls_made"]),
    }


BARE_CALLS = [{"name": "list_accounts", "arguments": {}}]


def measure_bare(port: int, processes: int, args: Any, work: Path) -> dict[str, Any]:
    """The same load against the MCP SDK alone (`mcp_bare_sdk.py`) on `processes`
    processes: every call its one tool."""
    command = [sys.executable, str(BENCH_DIR / "mcp_bare_sdk.py"), str(port), str(processes)]
    env = {**code_env(work), "PYTHONPATH": f"{BENCH_DIR}{os.pathsep}{work / 'code' / 'src'}"}
    with (work / "bare.log").open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, cwd=str(BENCH_DIR), env=env)
    try:
        support.wait_for_port(port, process)
        raw = [r["structuredContent"] for r in raw_answers(port, "no-key", BARE_CALLS)]
        if len(raw[0]["accounts"]) != 3:
            raise RuntimeError("the bare SDK answered something else")
        server_cpu = _cpu_of_tree(process.pid)
        found = run_load(port, "no-key", BARE_CALLS, args, work)
        server_cpu = _cpu_of_tree(process.pid) - server_cpu
    finally:
        support.stop_process(process)
    return figures(processes, found, server_cpu)


ANSWERS_FILE = "answers.json"


def measure_replay(port: int, processes: int, calls: list[dict[str, Any]], args: Any,
                   work: Path) -> dict[str, Any]:  # fmt: skip
    """The mix's load against the MCP SDK alone answering, per tool, the answers our server
    gave to the mix's calls (recorded by `measure`), in turn: the floor under the mix."""
    command = [sys.executable, str(BENCH_DIR / "mcp_bare_sdk.py"), str(port), str(processes)]
    env = {
        **code_env(work),
        "PYTHONPATH": f"{BENCH_DIR}{os.pathsep}{work / 'code' / 'src'}",
        "MCP_BARE_ANSWERS": str(work / ANSWERS_FILE),
    }
    with (work / "bare.log").open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, cwd=str(BENCH_DIR), env=env)
    try:
        support.wait_for_port(port, process)
        server_cpu = _cpu_of_tree(process.pid)
        found = run_load(port, "no-key", calls, args, work)
        server_cpu = _cpu_of_tree(process.pid) - server_cpu
    finally:
        support.stop_process(process)
    return figures(processes, found, server_cpu)


VOLATILE = frozenset({"nextCursor", "lastCommittedAt"})


def _comparable(found: Any) -> Any:
    """An answer without what differs from one call to the next: cursors are sealed afresh
    (a random nonce) every time, and a folder's last commit moves with every polling pass."""
    if isinstance(found, dict):
        return {k: _comparable(v) for k, v in found.items() if k not in VOLATILE}
    if isinstance(found, list):
        return [_comparable(v) for v in found]
    return found


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b))
                for d in _differences(a.get(k), b.get(k), f"{path}.{k}")]  # fmt: skip
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in _differences(x, y, f"{path}[{i}]")]  # fmt: skip
    return [] if a == b else [path]


def raw_answers(port: int, key: str, calls: list[dict[str, Any]]) -> list[Any]:
    import httpx2

    found = []
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Mcp-Protocol-Version": PROTOCOL,
    }
    with httpx2.Client(timeout=60) as http:
        for number, call in enumerate(calls):
            sent = {**headers, "Mcp-Method": "tools/call", "Mcp-Name": call["name"]}
            answer = http.post(
                f"http://127.0.0.1:{port}/mcp", content=request_body(call, number), headers=sent
            )
            if answer.status_code != 200:
                raise RuntimeError(f"HTTP {answer.status_code}: {answer.text[:500]}")
            found.append(answer.json()["result"])
    return found


def _conninfo(url: str) -> str:
    import sqlalchemy as sa

    parsed = sa.make_url(url)
    return f"host={parsed.host} port={parsed.port} user={parsed.username} dbname={parsed.database}"


def _transactions(url: str) -> int:
    """Transactions committed and rolled back in the benchmark's database so far."""
    import psycopg

    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        row = connection.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


# The benchmark's own readings of the statistics views, left out of the statements counted.
_OWN_READINGS = "%pg_stat_%"


def _statements(url: str) -> int | None:
    """Statements the benchmark's database has run so far, from `pg_stat_statements`
    (`BEGIN` and `ROLLBACK` among them; not a pool's ping, an empty statement the view does
    not keep, which counts as a transaction instead); None where the server does not load
    it."""
    import psycopg

    try:
        with psycopg.connect(_conninfo(url), autocommit=True) as connection:
            connection.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            row = connection.execute(
                "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s"
                " JOIN pg_database d ON d.oid = s.dbid"
                " WHERE d.datname = current_database() AND s.query NOT LIKE %s",
                (_OWN_READINGS,),
            ).fetchone()
    except psycopg.Error:
        return None
    return int(row[0]) if row else 0


Timings = dict[str, tuple[int, float, str]]


def _statement_times(url: str) -> Timings:
    """Per statement kept by `pg_stat_statements`: its calls, its total execution time
    in ms, and its text; empty where the server does not load it."""
    import psycopg

    try:
        with psycopg.connect(_conninfo(url), autocommit=True) as connection:
            rows = connection.execute(
                "SELECT s.queryid::text, s.calls, s.total_exec_time, s.query"
                " FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
                " WHERE d.datname = current_database() AND s.query NOT LIKE %s",
                (_OWN_READINGS,),
            ).fetchall()
    except psycopg.Error:
        return {}
    return {str(r[0]): (int(r[1]), float(r[2]), str(r[3])) for r in rows}


def _costliest(before: Timings, after: Timings, most: int = 10) -> list[dict[str, Any]]:
    """The `most` statements whose execution time grew the most from `before` to `after`."""
    grown: list[tuple[float, int, str]] = []
    for key, (calls, total, text) in after.items():
        calls_then, total_then, _ = before.get(key, (0, 0.0, text))
        if calls > calls_then:
            grown.append((total - total_then, calls - calls_then, text))
    grown.sort(reverse=True)
    return [
        {"total_ms": round(t, 1), "calls": c, "mean_ms": round(t / c, 3),
         "statement": " ".join(text.split())[:400]}
        for t, c, text in grown[:most]
    ]  # fmt: skip


def count_statements(server: Any) -> None:
    """Have the benchmark's own PostgreSQL count statements (`pg_stat_statements` is
    loaded at start only, hence the restart)."""
    import psycopg

    with psycopg.connect(server.conninfo(), autocommit=True) as connection:
        connection.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
    server.halt()
    server.resume()


def _postmaster(url: str) -> int | None:
    """The PID of the PostgreSQL server holding the benchmark's database, when it runs on
    this machine and its processes can be read (the parent of a backend's process)."""
    import psycopg

    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        row = connection.execute("SELECT pg_backend_pid()").fetchone()
    try:
        stat = Path(f"/proc/{row[0] if row else 0}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _database_cpu(postmaster: int | None) -> float | None:
    """User and system seconds of the database server so far: its own, those of the
    backends it has reaped (the server's children's time), and those of the backends alive
    now (from /proc); None where it cannot be read."""
    if postmaster is None:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    except OSError:
        return None
    total = sum(int(f) for f in fields[11:15]) / ticks
    for child in children:
        try:
            stat = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile: its time is among the server's children's now
        total += (int(stat[11]) + int(stat[12])) / ticks
    return total


def _cpu_of_tree(pid: int) -> float:
    """User and system seconds of `pid` and its children so far (from /proc)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    for one in pids:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


# --------------------------------------------------------------------------- the report


def report(results: dict[str, Any]) -> None:
    runs = results["runs"]
    base = runs[0]["calls_per_s"] if runs else 0.0
    print(
        f"\nMCP reading tools, {results['clients']} clients, {results['seconds']:.0f} s each, "
        f"{results['messages']} messages in {results['accounts']} accounts, PostgreSQL"
    )
    print(f"{'processes':>9} {'calls/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} "
          f"{'ratio':>6} {'server cpu s':>12} {'load cpu s':>10} {'xact/call':>9} "
          f"{'cpu ms/call':>11} {'stmt/call':>9} {'db ms/call':>10}")  # fmt: skip
    for run in runs:
        print(
            f"{run['processes']:>9} {run['calls_per_s']:>9.1f} {run['p50_ms']:>8.1f} "
            f"{run['p95_ms']:>8.1f} {run['p99_ms']:>8.1f} "
            f"{run['calls_per_s'] / base if base else 0:>6.2f} "
            f"{run['server_cpu_s']:>12.1f} {run['load_cpu_s']:>10.1f} "
            f"{run['transactions_per_call']:>9.2f} {run['server_cpu_ms_per_call']:>11.2f} "
            f"{_or_dash(run.get('statements_per_call')):>9} "
            f"{_or_dash(run.get('database_cpu_ms_per_call')):>10}"
        )
    print(
        f"target at the most processes: {TARGET_CALLS_PER_S:.0f} calls/s with p95 under "
        f"{TARGET_P95_MS:.0f} ms"
    )
    if not results["baseline"]:
        return
    print(
        "\nThe same load, every call list_accounts: the MCP SDK alone (one tool, fixed answer,"
        " no store) and ours; 'of SDK' is ours (and the mix) as a share of the SDK's calls/s"
    )
    print(f"{'processes':>9} {'SDK calls/s':>11} {'SDK p95':>8} {'SDK ms/call':>11} "
          f"{'ours calls/s':>12} {'ours p95':>8} {'ours ms/call':>12} {'of SDK':>6} "
          f"{'mix of SDK':>10}")  # fmt: skip
    for bare, alone, run in zip(
        results["baseline"], results["list_accounts_alone"], runs, strict=True
    ):
        print(
            f"{bare['processes']:>9} {bare['calls_per_s']:>11.1f} {bare['p95_ms']:>8.1f} "
            f"{bare['server_cpu_ms_per_call']:>11.2f} {alone['calls_per_s']:>12.1f} "
            f"{alone['p95_ms']:>8.1f} {alone['server_cpu_ms_per_call']:>12.2f} "
            f"{alone['calls_per_s'] / bare['calls_per_s']:>6.2f} "
            f"{run['calls_per_s'] / bare['calls_per_s']:>10.2f}"
        )
    print(
        "\nThe mix's load against the MCP SDK alone answering our recorded answers of the mix"
        " (no store, no tool work): the floor under the mix"
    )
    print(f"{'processes':>9} {'calls/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms/call':>11} "
          f"{'mix of it':>9}")  # fmt: skip
    for replay, run in zip(results["replay"], runs, strict=True):
        print(
            f"{replay['processes']:>9} {replay['calls_per_s']:>9.1f} {replay['p50_ms']:>8.1f} "
            f"{replay['p95_ms']:>8.1f} {replay['server_cpu_ms_per_call']:>11.2f} "
            f"{run['calls_per_s'] / replay['calls_per_s']:>9.2f}"
        )


def per_kind(calls: list[dict[str, Any]], work: Path, args: Any,
             setup: dict[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """Each kind of call alone on one process, under the code measured (and `--against`)."""
    this = work / "code-this"
    if this.exists():
        shutil.rmtree(this)
    shutil.copytree(work / "code" / "src", this)
    codes = {"this": this}
    if args.against is not None:
        codes["against"] = Path(args.against)
    log(f"each kind of call alone, under {', '.join(codes)}")
    try:
        return measure_kinds(calls, work, codes, lambda alone: measure(setup, alone, 1, args, work))
    finally:
        shutil.rmtree(work / "code")
        shutil.copytree(this, work / "code" / "src")


def _or_dash(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warm", type=float, default=3.0)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--accounts", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database-url")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--work-dir", help="keep the deployment here (with --database-url)")
    parser.add_argument("--code", help="serve this copy of src/ (default: the work tree's)")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the MCP SDK alone and our list_accounts alone at each process count",
    )
    parser.add_argument(
        "--per-kind",
        action="store_true",
        help="then each kind of call of the mix alone on one process (mcp_call_kinds.py)",
    )
    parser.add_argument(
        "--against",
        help="with --per-kind: this copy of src/ too, kind by kind in turn with the code",
    )
    parser.add_argument("--child-load")
    args = parser.parse_args()
    if args.child_load:
        child_load(args.child_load)
        return
    counts = [int(n) for n in args.processes.split(",")]
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS_DIR.mkdir(exist_ok=True)
    results: dict[str, Any] = {
        "benchmark": "mcp_throughput",
        "started_at": stamp,
        "command": " ".join(sys.argv),
        "machine": environment({"postgres": ["postgres", "--version"]}),
        "clients": args.clients,
        "seconds": args.seconds,
        "messages": args.messages,
        "accounts": args.accounts,
        "runs": [],
        "baseline": [],
        "list_accounts_alone": [],
        "replay": [],
    }
    server = None
    with contextlib.ExitStack() as stack:
        if args.work_dir is not None:
            work = Path(args.work_dir)
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-throughput-")))
        kept = work / "setup.json"
        url = args.database_url
        if (work / "code").exists():
            shutil.rmtree(work / "code")
        if args.code is not None:
            shutil.copytree(Path(args.code), work / "code" / "src")
            results["code"] = {"snapshot": args.code, "source": "--code"}
        else:
            results["code"] = support.snapshot_code(work)
        try:
            if kept.exists():
                setup = json.loads(kept.read_text())
                setup["config"] = Path(setup["config"])
                calls = setup["calls"]
                log(f"reusing the deployment in {work}")
            else:
                if url is None:
                    sys.path.insert(0, str(REPO / "tests"))
                    from servers.postgres import PostgresServer

                    server = PostgresServer().start()
                    count_statements(server)
                    url = server.create_database("throughput")
                setup = build(work, url, args.accounts, args.messages, args.seed)
                calls = first_calls(setup, args.seed)
                if args.work_dir is not None and args.database_url is not None:
                    kept.write_text(json.dumps({**setup, "config": str(setup["config"]),
                                                "calls": calls}))  # fmt: skip
            speed = busy_cores_speed()
            results["machine"]["busy_cores_speed"] = speed
            log(f"with every core busy, a core does {speed['ratio']:.0%} of the work per CPU "
                "second it does alone")  # fmt: skip
            for count in counts:
                log(f"{count} process(es): {args.clients} clients for {args.seconds:.0f} s")
                run = measure(setup, calls, count, args, work)
                log(f"  {run['calls_per_s']:.1f} calls/s, p95 {run['p95_ms']:.1f} ms")
                results["runs"].append(run)
                if args.no_baseline:
                    continue
                bare = measure_bare(setup["port"], count, args, work)
                log(f"  the SDK alone: {bare['calls_per_s']:.1f} calls/s")
                results["baseline"].append(bare)
                alone = measure(setup, BARE_CALLS, count, args, work)
                log(f"  our list_accounts alone: {alone['calls_per_s']:.1f} calls/s")
                results["list_accounts_alone"].append(alone)
                replay = measure_replay(setup["port"], count, calls, args, work)
                log(f"  the SDK alone with the mix's answers: {replay['calls_per_s']:.1f} calls/s")
                results["replay"].append(replay)
            if args.per_kind or args.against:
                results["kinds"] = per_kind(calls, work, args, setup)
            if args.profile:
                prefix = RESULTS_DIR / f"mcp_throughput-{stamp}-profile"
                log(f"profiling the calls in one process into {prefix}.txt")
                (work / "calls.json").write_text(json.dumps(calls))
                subprocess.run(
                    [sys.executable, str(BENCH_DIR / "mcp_call_profile.py"),
                     str(setup["config"]), str(work / "calls.json"), setup["key"], str(prefix)],
                    check=True, stdout=subprocess.DEVNULL,
                    env={**code_env(work), STATE_SECRET_ENV: setup["state_secret"]},
                )  # fmt: skip
                results["profile"] = f"{prefix}.txt"
        finally:
            if server is not None:
                server.stop()
    path = RESULTS_DIR / f"mcp_throughput-{stamp}.json"
    path.write_text(json.dumps(results, indent=2))
    report(results)
    report_kinds(results.get("kinds", []))
    print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
