"""Read latency benchmark: list_emails, search_emails and get_email_content against notmuch.

    uv run python bench/read_latency.py [--messages N] [--store-dir DIR] [--iterations I]

A store of N generated messages (see `mailgen.py`; default 100,000) is built once: the
messages are written into the Maildir folders of a local account, one synchronization
(`Services.open` + `run_once`, in a child process) stores and indexes them, and a notmuch
database is pointed at the same Maildir tree (`notmuch new`, then the Junk folder tagged
`spam`, which notmuch excludes from searches as our tools leave junk out). These steps are
timed as setup, not as latency. With --store-dir the store is kept and reused by later runs
that ask for the same messages and seed.

Then, on that one store and in the same run, each operation is called I times after a
warm-up (variants in rotation), one call after the other and never concurrently:

  in-process  the use cases of `Services.reading()` called directly, with a caller holding
              every permission
  HTTP        the tools over Streamable HTTP: the official MCP client, one session kept open
              for the whole run, against `mailfathom serve` in its own process; each
              `call_tool` round trip is timed (session set-up is not)
  notmuch     the notmuch CLI as a subprocess, wall time per call (process start and
              database open included, as for anyone who uses it): `notmuch search
              --output=summary --limit=20` for the same queries, and as analogues of a
              listing and a content read `notmuch search --limit=25 [--offset]` and
              `notmuch show --format=json --entire-thread=false id:...`

The three sides are interleaved call by call (rotating which goes first) so that load from
other work on the machine falls on all of them alike. Every figure is warm: the database
files and the Maildir are in the page cache after the warm-up. notmuch answers threads, our
tools answer messages; the number of results each side returned is reported beside the
times.

The server's own time per tool call is read from its /metrics, and the MCP client's check of
each result against the tool's output schema is timed alone, which splits an HTTP round trip
into the use case, the server, the client's validation and the transport.

Afterwards, unless --no-profile: the SQL each in-process operation runs is timed statement by
statement and its EXPLAIN QUERY PLAN kept, the cost of mapping and serializing each answer is
timed, and each operation is profiled with pyinstrument (in-process, and the MCP client's side
of HTTP calls).

--report FILE prints the report of an earlier results JSON again.

The code measured is a copy of src/ taken from the work tree when the run starts. Results are
printed and written as JSON (profiles as text and HTML) to bench/results/, which git ignores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import read_latency_support as support  # noqa: E402
from machine import environment, log  # noqa: E402
from read_latency_support import summary_ms  # noqa: E402

REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
STORE_MARKER = "bench-store.json"
STORE_FORMAT = 1
LIST_PAGE = 25
SEARCH_LIMIT = 20
TARGETS = {
    "search_p50_over_notmuch": 1.0,
    "list_p50_ms": 10.0,
    "get_p50_ms": 10.0,
}
OPERATIONS = (
    "list_emails",
    "search_emails",
    "get_email_content (1 id)",
    "get_email_content (10 ids)",
)
SIDES = ("in-process", "http", "notmuch")


# --------------------------------------------------------------------------- the store


def store_paths(store_dir: Path) -> dict[str, Path]:
    data = store_dir / "data"
    return {
        "config": store_dir / "mailfathom.toml",
        "data": data,
        "maildir": data / "local" / support.ACCOUNT_ID,
        "sqlite": data / "mailfathom.sqlite3",
        "notmuch_config": store_dir / "notmuch" / "config",
        "notmuch_db": store_dir / "notmuch" / "db",
        "marker": store_dir / STORE_MARKER,
    }


def write_config(store_dir: Path, port: int, key: str) -> Path:
    paths = store_paths(store_dir)
    digest = hashlib.sha256(key.encode()).hexdigest()
    paths["config"].write_text(support.config_text(paths["data"], port, digest), "utf-8")
    return paths["config"]


def prepare_store(store_dir: Path, messages: int, seed: int, code: Path) -> dict[str, Any]:
    """Build the store, or reuse it when it already holds what is asked for."""
    paths = store_paths(store_dir)
    if paths["marker"].exists():
        found = json.loads(paths["marker"].read_text())
        if (
            found.get("format") == STORE_FORMAT
            and found.get("messages") == messages
            and found.get("seed") == seed
            and found.get("complete")
        ):
            log(f"reusing the store in {store_dir} (built {found['built_at']})")
            return {**found, "reused": True}
        log(f"the store in {store_dir} holds another corpus or an unfinished build; rebuilding")
        for name in ("data", "notmuch", STORE_MARKER, "mailfathom.toml"):
            target = store_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
    elif store_dir.exists() and any(store_dir.iterdir()):
        raise SystemExit(f"{store_dir} is not empty and holds no benchmark store; not touching it")
    store_dir.mkdir(parents=True, exist_ok=True)
    marker: dict[str, Any] = {
        "format": STORE_FORMAT,
        "messages": messages,
        "seed": seed,
        "built_at": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "complete": False,
    }
    # Written first, so that a build cut short is recognized (and redone) by the next run.
    paths["marker"].write_text(json.dumps(marker, indent=2))
    write_config(store_dir, support.free_port(), secrets.token_hex(16))

    log(f"generating {messages} messages into {paths['maildir']}")
    corpus = support.write_maildir(paths["maildir"], messages, seed)
    marker["corpus"] = corpus
    log(
        f"generated {corpus['messages']} messages, {corpus['octets'] / 1e6:.0f} MB in "
        f"{corpus['generate_and_write_s']:.1f} s"
    )

    log("our synchronization: one run_once into a fresh SQLite store (child process)")
    env = {**os.environ, "PYTHONPATH": str(code / "src")}
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child-sync", str(paths["config"])],
        env=env,
        cwd=str(REPO),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"our synchronization failed:\n{out.stderr[-3000:]}")
    sync = json.loads(out.stdout.strip().splitlines()[-1])
    sync["process_wall_s"] = time.perf_counter() - start
    sync["messages_per_s"] = messages / sync["sync_wall_s"]
    marker["sync"] = sync
    if sync["stored"] != messages:
        raise RuntimeError(f"our store holds {sync['stored']} messages, not {messages}")
    log(f"synchronized in {sync['sync_wall_s']:.1f} s ({sync['messages_per_s']:.0f} msg/s)")

    log("notmuch new over the same Maildir tree")
    support.write_notmuch_config(paths["notmuch_config"], paths["notmuch_db"], paths["maildir"])
    nm = support.build_notmuch(
        paths["notmuch_config"], support.notmuch_env(paths["notmuch_config"])
    )
    nm["database_octets"] = support.directory_octets(paths["notmuch_db"])
    marker["notmuch"] = nm
    if nm["messages"] != messages:
        raise RuntimeError(f"notmuch indexed {nm['messages']} messages, not {messages}")
    log(f"notmuch new: {nm['notmuch_new_s']:.1f} s")
    marker["complete"] = True
    paths["marker"].write_text(json.dumps(marker, indent=2))
    return {**marker, "reused": False}


def child_sync(config_path: str) -> None:
    """One initial synchronization, in its own process; prints a JSON line."""
    import resource

    import sqlalchemy as sa

    from mailfathom.adapters.config.toml_loader import load_config
    from mailfathom.bootstrap import Services

    config = load_config(Path(config_path))
    (account,) = config.accounts
    with Services.open(config) as services:
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        services.account_synchronizer().run_once(account)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        with services.engine.connect() as c:
            stored = c.execute(sa.text("SELECT count(*) FROM messages")).scalar_one()
            indexed = c.execute(sa.text("SELECT count(*) FROM message_fts")).scalar_one()
            threads = c.execute(
                sa.text("SELECT count(DISTINCT thread_id) FROM messages")
            ).scalar_one()
            largest = c.execute(
                sa.text("SELECT max(n) FROM (SELECT count(*) n FROM messages GROUP BY thread_id)")
            ).scalar_one()
    data = config.store.data_dir
    result = {
        "sync_wall_s": wall,
        "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "stored": stored,
        "indexed": indexed,
        "conversations": threads,
        "largest_conversation": largest,
        "database_octets": sum(p.stat().st_size for p in data.glob("mailfathom.sqlite3*")),
        "content_octets": support.directory_octets(config.store.content_dir),
    }
    print(json.dumps(result))


# --------------------------------------------------------------------------- what is called


@dataclass
class Call:
    """One call of an operation, made the same way on every side."""

    op: str
    variant: str
    tool: str
    args: dict[str, Any]
    inproc: Callable[[], int]
    published: Callable[[], Any]
    notmuch: dict[str, list[str]] = field(default_factory=dict)


SELECTION_KEYS = {
    "folders": "folders",
    "senderAddress": "sender_address",
    "subjectFragment": "subject_fragment",
    "isRemotelySeen": "is_remotely_seen",
    "hasAttachments": "has_attachments",
}


class Workload:
    """The calls of a run, built from what the store holds."""

    def __init__(self, services: Any, env: dict[str, str], rounds: int, seed: int) -> None:
        from mailfathom.domain.access import ALL_PERMISSIONS, Caller

        self.services = services
        self.reading = services.reading()
        self.caller = Caller(permissions=ALL_PERMISSIONS, label="bench")
        self.env = env
        self.rounds = rounds
        self.rng = random.Random(seed)
        self.facts: dict[str, Any] = {}

    # -- in-process calls

    def _selection(self, args: dict[str, Any]) -> Any:
        from mailfathom.app.shared.mailbox_selection import SelectionInput

        return SelectionInput(
            **{SELECTION_KEYS[k]: v for k, v in args.items() if k in SELECTION_KEYS}
        )

    # Each builder gives the use case call (returning how many items it answered) and the
    # same call followed by what the server does with its answer before the MCP SDK takes
    # over: the published model (mapping) and the tool result (_success: JSON text and
    # structured content).

    def _list(self, args: dict[str, Any]) -> tuple[Callable[[], int], Callable[[], Any]]:
        from mailfathom.app.reading.list_emails import TimelineRequest
        from mailfathom.entrypoints.mcp import mapping
        from mailfathom.entrypoints.mcp.registry import _success

        request = TimelineRequest(
            selection=self._selection(args),
            newest_first=True,
            page_size=args["pageSize"],
            cursor=args.get("cursor"),
        )

        def read() -> Any:
            return self.reading.timeline.read(self.caller, request)

        return lambda: len(read().emails), lambda: _success(mapping.timeline(read()))

    def _search(self, query: str) -> tuple[Callable[[], int], Callable[[], Any]]:
        from mailfathom.app.reading.search_emails import SearchRequest
        from mailfathom.entrypoints.mcp import mapping
        from mailfathom.entrypoints.mcp.registry import _success
        from mailfathom.entrypoints.mcp.tools.search_emails import SNIPPET_CEILING

        request = SearchRequest(
            query_text=query, selection=self._selection({}), result_limit=SEARCH_LIMIT
        )

        def read() -> Any:
            return self.reading.search.search(self.caller, request)

        return (
            lambda: len(read().matches),
            lambda: _success(mapping.search(read(), SNIPPET_CEILING)),
        )

    def _get(self, ids: list[str]) -> tuple[Callable[[], int], Callable[[], Any]]:
        from mailfathom.app.reading.get_email_content import ContentRequest
        from mailfathom.entrypoints.mcp import mapping
        from mailfathom.entrypoints.mcp.registry import _success

        request = ContentRequest(stored_email_ids=list(ids))

        def read() -> Any:
            answer = self.reading.content.read(self.caller, request)
            failed = [e for e in answer.emails if e.content is None]
            if failed:
                raise RuntimeError(f"get_email_content failed for {len(failed)} emails")
            return answer

        return lambda: len(read().emails), lambda: _success(mapping.content(read()))

    # -- the store's facts

    def _scalar(self, sql: str, **params: Any) -> Any:
        import sqlalchemy as sa

        with self.services.engine.connect() as c:
            return c.execute(sa.text(sql), params).scalar_one()

    def _rows(self, sql: str, **params: Any) -> list[Any]:
        import sqlalchemy as sa

        with self.services.engine.connect() as c:
            return list(c.execute(sa.text(sql), params))

    def _readable_folder_ids(self) -> list[int]:
        return [
            int(r[0])
            for r in self._rows(
                "SELECT folder_id FROM folders WHERE visible_to_tools "
                "AND (role IS NULL OR role != 'Junk')"
            )
        ]

    def _our_match_count(self, query: str) -> int:
        from mailfathom.adapters.sql.index_queries import fts5_query, searchable

        terms = searchable(query.split())
        folder_ids = ",".join(str(f) for f in self._readable_folder_ids())
        return int(
            self._scalar(
                "SELECT count(*) FROM message_fts f JOIN messages m ON m.seq = f.rowid "
                f"WHERE message_fts MATCH :q AND m.folder_id IN ({folder_ids})",
                q=fts5_query(terms),
            )
        )

    def queries(self) -> list[tuple[str, str]]:
        """(kind, query text): words of the generated mail, from everywhere to nowhere."""
        # A subject number names one conversation: take the one of a thread started half way.
        subjects = self._rows(
            "SELECT subject FROM messages WHERE subject NOT LIKE 'Re:%' "
            "AND subject LIKE '%(%)' ORDER BY seq LIMIT 1 OFFSET :n",
            n=max(0, self._scalar("SELECT count(*) FROM messages") // 4),
        )
        numbered = re.search(r"\((\d+)\)", subjects[0][0]) if subjects else None
        number = numbered.group(1) if numbered else "2291"
        return [
            ("common word", "review"),
            ("common word", "customers"),
            ("two common words", "migration rollout"),
            ("two common words", "invoice contract"),
            ("topic word", "offsite"),
            ("topic and common word", "security review"),
            ("sender name", "Hopper"),
            ("sender name, non-ASCII", "Kierkegaard"),
            ("rare accented word", "smörgåsbord"),
            ("rare word, non-ASCII", "Überprüfung"),
            ("subject number", number),
            ("no match", "zeppelin"),
        ]

    def build(self) -> dict[str, list[Call]]:
        facts = self.facts
        rng = self.rng
        rounds = self.rounds
        facts["stored_messages"] = self._scalar("SELECT count(*) FROM messages")
        facts["conversations"] = self._scalar("SELECT count(DISTINCT thread_id) FROM messages")
        facts["largest_conversation"] = self._scalar(
            "SELECT max(n) FROM (SELECT count(*) n FROM messages GROUP BY thread_id)"
        )
        per_folder = self._rows(
            "SELECT f.alias, count(*) FROM messages m JOIN folders f "
            "ON f.folder_id = m.folder_id GROUP BY f.alias"
        )
        facts["per_folder"] = {str(alias): int(n) for alias, n in per_folder}

        # list_emails: the first page, later pages by cursor, and filtered pages.
        cursors: list[str] = []
        from mailfathom.app.reading.list_emails import TimelineRequest

        cursor = None
        for _ in range(40):
            page = self.reading.timeline.read(
                self.caller,
                TimelineRequest(selection=self._selection({}), page_size=LIST_PAGE, cursor=cursor),
            )
            cursor = page.next_cursor
            if cursor is None:
                break
            cursors.append(cursor)
        sender = "grace@example.net"
        list_variants: list[tuple[str, dict[str, Any], list[str]]] = [
            ("first page", {}, ["*"]),
            ("later page (cursor)", {}, ["*"]),
            ("sender filter", {"senderAddress": sender}, [f"from:{sender}"]),
            ("folder filter", {"folders": ["Archive"]}, ["folder:Archive"]),
            ("unread filter", {"isRemotelySeen": False}, ["tag:unread"]),
            ("subject fragment", {"subjectFragment": "invoice"}, ["subject:invoice"]),
        ]
        lists: list[Call] = []
        for r in range(rounds):
            label, extra, query = list_variants[r % len(list_variants)]
            args: dict[str, Any] = {**extra, "pageSize": LIST_PAGE}
            offset: list[str] = []
            if label.startswith("later") and cursors:
                depth = (r // len(list_variants)) % len(cursors)
                args["cursor"] = cursors[depth]
                offset = [f"--offset={LIST_PAGE * (depth + 1)}"]
            notmuch = [
                "search",
                "--output=summary",
                f"--limit={LIST_PAGE}",
                "--sort=newest-first",
                *offset,
                "--",
                *query,
            ]
            lists.append(
                Call(
                    "list_emails",
                    label,
                    "list_emails",
                    args,
                    *self._list(args),
                    {"notmuch": notmuch},
                )
            )

        # search_emails: the same words for both.
        queries = self.queries()
        facts["queries"] = []
        for kind, text in queries:
            threads = support.notmuch(self.env, "count", "--output=threads", "--", text).strip()
            messages = support.notmuch(self.env, "count", "--output=messages", "--", text)
            facts["queries"].append(
                {
                    "kind": kind,
                    "query": text,
                    "ours_matching_messages": self._our_match_count(text),
                    "notmuch_matching_messages": int(messages.strip()),
                    "notmuch_matching_threads": int(threads),
                }
            )
        searches = []
        for r in range(rounds):
            kind, text = queries[r % len(queries)]
            base = ["search", "--output=summary", f"--limit={SEARCH_LIMIT}"]
            searches.append(
                Call(
                    "search_emails",
                    text,
                    "search_emails",
                    {"queryText": text, "resultLimit": SEARCH_LIMIT},
                    *self._search(text),
                    {
                        "notmuch": [*base, "--", text],
                        "notmuch --format=json": [*base, "--format=json", "--", text],
                    },
                )
            )

        # get_email_content: random stored emails, one and ten at a time.
        population = self._rows(
            "SELECT stored_email_id, message_id_header FROM messages m JOIN folders f "
            "ON f.folder_id = m.folder_id WHERE f.visible_to_tools AND m.content_state = 'stored'"
        )
        facts["get_population"] = len(population)
        picked = rng.sample(population, min(len(population), 11 * rounds))

        def ident(value: Any) -> str:
            return str(value) if not isinstance(value, str) else value

        def show(rows: list[Any]) -> list[str]:
            query = " or ".join(f"id:{r[1].strip('<>')}" for r in rows)
            return [
                "show",
                "--format=json",
                "--entire-thread=false",
                "--exclude=false",
                "--",
                query,
            ]

        gets_one: list[Call] = []
        gets_ten: list[Call] = []
        for r in range(rounds):
            one = [picked[r % len(picked)]]
            ten = [picked[(rounds + 10 * r + k) % len(picked)] for k in range(10)]
            for label, rows, target in (("1 id", one, gets_one), ("10 ids", ten, gets_ten)):
                ids = [self._uuid_text(ident(row[0])) for row in rows]
                target.append(
                    Call(
                        f"get_email_content ({label})",
                        label,
                        "get_email_content",
                        {"storedEmailIds": ids},
                        *self._get(ids),
                        {"notmuch": show(rows)},
                    )
                )
        return {
            "list_emails": lists,
            "search_emails": searches,
            "get_email_content (1 id)": gets_one,
            "get_email_content (10 ids)": gets_ten,
        }

    @staticmethod
    def _uuid_text(value: str) -> str:
        """SQLite keeps a UUID as 32 hex digits; the tools take the dashed form."""
        import uuid

        return str(uuid.UUID(value))


# --------------------------------------------------------------------------- measuring


def count_notmuch(argv: list[str], out: str) -> int:
    if argv[0] == "show":
        found = 0

        def walk(node: Any) -> None:
            nonlocal found
            if isinstance(node, dict):
                if "id" in node and "headers" in node:
                    found += 1
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(json.loads(out or "[]"))
        return found
    if "--format=json" in argv:
        return len(json.loads(out or "[]"))
    return len(out.splitlines())


def run_notmuch(env: dict[str, str], argv: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    out = subprocess.run(["notmuch", *argv], env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"notmuch {' '.join(argv)}: {out.stderr.decode()[:300]}")
    return wall, count_notmuch(argv, out.stdout.decode("utf-8", "replace"))


def http_count(tool: str, content: dict[str, Any]) -> int:
    key = "matches" if tool == "search_emails" else "emails"
    return len(content.get(key, []))


@dataclass
class Samples:
    seconds: dict[tuple[str, str, str], list[float]] = field(default_factory=dict)
    counts: dict[tuple[str, str, str], list[int]] = field(default_factory=dict)
    response_octets: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def add(self, op: str, variant: str, side: str, seconds: float, count: int) -> None:
        self.seconds.setdefault((op, variant, side), []).append(seconds)
        self.counts.setdefault((op, variant, side), []).append(count)


async def measure(
    calls: dict[str, list[Call]],
    url: str,
    key: str,
    env: dict[str, str],
    warmup: int,
    iterations: int,
) -> tuple[Samples, dict[str, Any]]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    samples = Samples()
    headers = {"Authorization": f"Bearer {key}"}
    session: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        listed = (await client.list_tools()).tools
        session["tools"] = sorted(t.name for t in listed)
        schemas = {t.name: t.output_schema for t in listed}
        last_content: dict[str, tuple[str, dict[str, Any]]] = {}
        total = warmup + iterations
        started = time.perf_counter()
        metrics_url = url.removesuffix("/mcp") + "/metrics"
        metrics_before: dict[str, tuple[float, float]] = {}
        for r in range(total):
            measuring = r >= warmup
            if r == warmup:
                log(f"warm-up done ({warmup} rounds); measuring {iterations} rounds")
                metrics_before = tool_durations((await http.get(metrics_url)).text)
            elif measuring and (r - warmup) % 50 == 0:
                log(f"round {r - warmup}/{iterations} ({time.perf_counter() - started:.0f} s)")
            for op in OPERATIONS:
                call = calls[op][r]
                sides = [*SIDES[r % 3 :], *SIDES[: r % 3]]
                for side in sides:
                    if side == "in-process":
                        start = time.perf_counter()
                        count = call.inproc()
                        wall = time.perf_counter() - start
                        if measuring:
                            samples.add(op, call.variant, side, wall, count)
                    elif side == "http":
                        start = time.perf_counter()
                        result = await client.call_tool(call.tool, call.args)
                        wall = time.perf_counter() - start
                        if result.is_error:
                            text = "".join(getattr(b, "text", "") for b in result.content)
                            raise RuntimeError(f"{call.tool} {call.args}: {text[:300]}")
                        content = result.structured_content or {}
                        last_content[op] = (call.tool, content)
                        if measuring:
                            samples.add(
                                op, call.variant, side, wall, http_count(call.tool, content)
                            )
                            octets = sum(len(getattr(b, "text", "")) for b in result.content)
                            samples.response_octets.setdefault((op, side), []).append(octets)
                    else:
                        for label, argv in call.notmuch.items():
                            wall, count = run_notmuch(env, argv)
                            if measuring:
                                samples.add(op, call.variant, label, wall, count)
        session["measuring_s"] = time.perf_counter() - started
        session["client_schema_validation_ms"] = {
            op: validation_cost(schemas.get(tool), content)
            for op, (tool, content) in last_content.items()
        }
        metrics_after = tool_durations((await http.get(metrics_url)).text)
        session["server_tool_call_mean_ms"] = {
            tool: 1000
            * (total_s - metrics_before.get(tool, (0.0, 0.0))[0])
            / max(1.0, count - metrics_before.get(tool, (0.0, 0.0))[1])
            for tool, (total_s, count) in metrics_after.items()
        }
    return samples, session


def validation_cost(schema: dict[str, Any] | None, content: dict[str, Any]) -> dict[str, float]:
    """What the MCP client spends checking one result against the tool's output schema, as
    `ClientSession.validate_tool_result` does it (a compiled validator, then best_match over
    iter_errors), timed alone on the last result the client received."""
    if not schema:
        return {"n": 0}
    from jsonschema import exceptions
    from jsonschema.validators import validator_for
    from referencing import Registry

    validator = validator_for(schema)(schema, registry=Registry())
    walls = []
    for _ in range(30):
        start = time.perf_counter()
        error = exceptions.best_match(validator.iter_errors(content))
        walls.append(time.perf_counter() - start)
        if error is not None:
            raise RuntimeError(f"structured content does not match its schema: {error}")
    return {**summary_ms(walls), "content_characters": len(json.dumps(content))}


def tool_durations(metrics: str) -> dict[str, tuple[float, float]]:
    """(sum of seconds, count) of successful calls per tool from the server's /metrics: the
    time from the server's call_tool taking the call to the tool result being ready (argument
    validation, the use case in a worker thread, mapping and serialization of the result)."""
    found: dict[str, list[float]] = {}
    pattern = re.compile(
        r"^mailfathom_mcp_tool_call_duration_seconds_(sum|count)\{(.*)\} (\S+)$", re.M
    )
    for kind, labels, value in pattern.findall(metrics):
        fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if fields.get("outcome") != "success":
            continue
        entry = found.setdefault(fields.get("tool", "?"), [0.0, 0.0])
        entry[0 if kind == "sum" else 1] += float(value)
    return {tool: (v[0], v[1]) for tool, v in found.items()}


def process_floor(times: int = 50) -> dict[str, float]:
    """What starting any small program costs from here: the floor under every notmuch call."""
    true = shutil.which("true") or "/bin/true"
    walls = []
    for _ in range(times):
        start = time.perf_counter()
        subprocess.run([true], check=True)
        walls.append(time.perf_counter() - start)
    return summary_ms(walls)


# --------------------------------------------------------------------------- where time goes


def breakdown(services: Any, calls: dict[str, list[Call]], per_variant: int = 10) -> dict[str, Any]:
    """Per operation and variant: wall time of the in-process call, the time inside SQL
    statements (cursor.execute: for SQLite the statement runs up to its first row there, which
    for a sort or a materialized CTE is the whole work) and the statements themselves with
    their EXPLAIN QUERY PLAN."""
    import sqlalchemy as sa

    # The reading use cases may read through an engine of their own (read-only connections).
    engine = getattr(services, "read_engine", None) or services.engine
    state: dict[str, Any] = {"on": False, "statements": []}

    def before(conn: Any, cursor: Any, statement: str, parameters: Any, *rest: Any) -> None:
        if state["on"]:
            conn.info["bench_started"] = time.perf_counter()

    def after(conn: Any, cursor: Any, statement: str, parameters: Any, *rest: Any) -> None:
        if state["on"]:
            elapsed = time.perf_counter() - conn.info.pop("bench_started", time.perf_counter())
            state["statements"].append((statement, parameters, elapsed))

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    report: dict[str, Any] = {}
    try:
        for op, op_calls in calls.items():
            seen: dict[str, Call] = {}
            for call in op_calls:
                seen.setdefault(call.variant, call)
            for variant, call in seen.items():
                walls, sql_total, statement_count = [], 0.0, 0
                slowest: dict[str, list[Any]] = {}
                for _ in range(per_variant):
                    state["statements"] = []
                    state["on"] = True
                    start = time.perf_counter()
                    call.inproc()
                    walls.append(time.perf_counter() - start)
                    state["on"] = False
                    statement_count = len(state["statements"])
                    for statement, parameters, elapsed in state["statements"]:
                        sql_total += elapsed
                        entry = slowest.setdefault(statement, [0.0, 0, parameters])
                        entry[0] += elapsed
                        entry[1] += 1
                published = []
                for _ in range(per_variant):
                    start = time.perf_counter()
                    call.published()
                    published.append(time.perf_counter() - start)
                ranked = sorted(slowest.items(), key=lambda kv: -kv[1][0])
                statements = []
                raw = engine.raw_connection()
                try:
                    # The engine registers the text-folding function on every connection.
                    driver = raw.driver_connection
                    for statement, (total, calls_n, parameters) in ranked[:4]:
                        plan = [
                            row[-1]
                            for row in driver.execute(
                                "EXPLAIN QUERY PLAN " + statement, parameters
                            ).fetchall()
                        ]
                        statements.append(
                            {
                                "statement": " ".join(statement.split()),
                                "parameters": [str(p)[:80] for p in parameters][:12],
                                "mean_ms": 1000 * total / per_variant,
                                "executions_per_call": calls_n / per_variant,
                                "plan": plan,
                            }
                        )
                finally:
                    raw.close()
                report[f"{op} | {variant}"] = {
                    "wall": summary_ms(walls),
                    "with_tool_result": summary_ms(published),
                    "sql_ms_per_call": 1000 * sql_total / per_variant,
                    "statements_per_call": statement_count,
                    "slowest_statements": statements,
                }
    finally:
        sa.event.remove(engine, "before_cursor_execute", before)
        sa.event.remove(engine, "after_cursor_execute", after)
    return report


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def write_profile(profiler: Any, base: Path, *, html: bool) -> dict[str, str]:
    """The call tree (library frames folded), a flat list of functions by their own time
    (library code included: where the time is spent), and optionally the HTML view."""
    tree = base.with_suffix(".txt")
    flat = base.with_name(base.name + "-flat.txt")
    tree.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
    flat.write_text(profiler.output_text(unicode=False, color=False, flat=True, show_all=True))
    out = {"tree": str(tree.relative_to(REPO)), "flat": str(flat.relative_to(REPO))}
    if html:
        base.with_suffix(".html").write_text(profiler.output_html())
        out["html"] = str(base.with_suffix(".html").relative_to(REPO))
    return out


def profile(
    calls: dict[str, list[Call]], stamp: str, rounds: int, slowest: dict[str, str]
) -> dict[str, Any]:
    """pyinstrument over in-process calls: every variant of each operation together, and the
    slowest variant of each operation on its own."""
    from pyinstrument import Profiler

    found: dict[str, Any] = {}
    plans = [(op, op_calls[:rounds]) for op, op_calls in calls.items()]
    for op, variant in slowest.items():
        if len({c.variant for c in calls[op]}) > 1:
            same = [c for c in calls[op] if c.variant == variant][: max(10, rounds // 3)]
            plans.append((f"{op} | {variant}", same))
    for label, chosen in plans:
        base = RESULTS_DIR / f"read_latency-{stamp}-pyinstrument-{_slug(label)}"
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for call in chosen:
            call.inproc()
        profiler.stop()
        found[label] = {"calls": len(chosen), **write_profile(profiler, base, html=True)}
    return found


async def profile_http(
    calls: dict[str, list[Call]], url: str, key: str, stamp: str, rounds: int
) -> dict[str, Any]:
    """The client's side of HTTP calls (the MCP client, httpx, jsonschema, pydantic) under
    pyinstrument, in a session of its own after the measurement."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from pyinstrument import Profiler

    found: dict[str, Any] = {}
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        for call in [c for op_calls in calls.values() for c in op_calls[:5]]:
            await client.call_tool(call.tool, call.args)  # warm the new server up
        for op, op_calls in calls.items():
            base = RESULTS_DIR / f"read_latency-{stamp}-pyinstrument-http-client-{_slug(op)}"
            profiler = Profiler(interval=0.0005, async_mode="enabled")
            profiler.start()
            walls = []
            for call in op_calls[:rounds]:
                start = time.perf_counter()
                await client.call_tool(call.tool, call.args)
                walls.append(time.perf_counter() - start)
            profiler.stop()
            found[op] = {
                "calls": len(walls),
                "wall_while_profiled": summary_ms(walls),
                **write_profile(profiler, base, html=False),
            }
    return found


def start_server(
    config_path: Path, port: int, code_dir: Path, log_path: Path
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config_path)]
    with log_path.open("ab") as handle:
        server = subprocess.Popen(
            [*command, "--port", str(port)],
            env={**os.environ, "PYTHONPATH": str(code_dir / "src")},
            stdout=handle,
            stderr=handle,
        )
    support.wait_for_port(port, server)
    return server


# --------------------------------------------------------------------------- report


def aggregate(samples: Samples) -> dict[str, Any]:
    """Per operation (every variant together) and per variant, for every side."""
    ops: dict[str, Any] = {}
    for (op, variant, side), seconds in samples.seconds.items():
        counts = samples.counts[(op, variant, side)]
        entry = ops.setdefault(op, {"all": {}, "variants": {}})
        entry["variants"].setdefault(variant, {})[side] = {
            **summary_ms(seconds),
            "mean_results": sum(counts) / len(counts),
        }
    for op, entry in ops.items():
        sides = {s for v in entry["variants"].values() for s in v}
        for side in sorted(sides):
            seconds = [
                x for (o, _v, s), xs in samples.seconds.items() if o == op and s == side for x in xs
            ]
            counts = [
                x for (o, _v, s), xs in samples.counts.items() if o == op and s == side for x in xs
            ]
            entry["all"][side] = {**summary_ms(seconds), "mean_results": sum(counts) / len(counts)}
        octets = samples.response_octets.get((op, "http"))
        if octets:
            entry["http_mean_response_characters"] = sum(octets) / len(octets)
    return ops


def ratio(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str = "p50_ms") -> float:
    if not a or not b or not b.get(key):
        return float("nan")
    return float(a[key] / b[key])


def checks(ops: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    out: list[tuple[str, float, str, bool]] = []
    search = ops["search_emails"]["all"]
    for side in ("in-process", "http"):
        value = ratio(search.get(side), search.get("notmuch"))
        out.append(
            (
                f"search p50 {side} / notmuch p50",
                value,
                "<= 1.0",
                value <= TARGETS["search_p50_over_notmuch"],
            )
        )
    for op, target in (
        ("list_emails", TARGETS["list_p50_ms"]),
        ("get_email_content (1 id)", TARGETS["get_p50_ms"]),
        ("get_email_content (10 ids)", TARGETS["get_p50_ms"]),
    ):
        value = ops[op]["all"]["in-process"]["p50_ms"]
        out.append((f"{op} p50 in-process, ms", value, f"< {target:g}", value < target))
    return out


def fmt(value: float | None, width: int = 7, digits: int = 1) -> str:
    if value is None or value != value:
        return f"{'-':>{width}}"
    return f"{value:{width}.{digits}f}"


def http_split(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Mean ms per call of each part of an HTTP call. `in-process` is the use case in the same
    interleaved rounds; `result` what mapping and serializing the answer adds (back to back);
    `server` the server's own call_tool (its /metrics; one figure per tool, so the two get
    variants are apportioned by their in-process means); `validation` the MCP client checking
    the result against the tool's output schema; `rest` the round trip less server and
    validation: JSON-RPC over Streamable HTTP on both sides."""
    ops = results["latency"]
    session = results["http_session"]
    server_means = session.get("server_tool_call_mean_ms", {})
    validation = session.get("client_schema_validation_ms", {})
    in_mean = {op: ops[op]["all"]["in-process"]["mean_ms"] for op in OPERATIONS}
    out: dict[str, dict[str, float]] = {}
    for op in OPERATIONS:
        tool = op.split(" ")[0]
        mine = [v for k, v in results.get("breakdown", {}).items() if k.startswith(op + " |")]
        result = (
            sum(v["with_tool_result"]["mean_ms"] - v["wall"]["mean_ms"] for v in mine) / len(mine)
            if mine
            else float("nan")
        )
        server = server_means.get(tool, float("nan"))
        same_tool = [o for o in OPERATIONS if o.split(" ")[0] == tool]
        if len(same_tool) > 1:
            shared = sum(in_mean[o] for o in same_tool) / len(same_tool)
            server = in_mean[op] + server - shared
        checked = validation.get(op, {}).get("mean_ms", float("nan"))
        round_trip = ops[op]["all"]["http"]["mean_ms"]
        out[op] = {
            "in_process_ms": in_mean[op],
            "result_ms": result,
            "server_ms": server,
            "validation_ms": checked,
            "round_trip_ms": round_trip,
            "rest_ms": round_trip - server - checked,
        }
    return out


def print_http_split(results: dict[str, Any]) -> None:
    print()
    print("where an HTTP call's time goes, mean ms per call:")
    print(
        f"  {'operation':28} {'in-proc':>8} {'+result':>8} {'server':>8} {'validation':>10} "
        f"{'rest':>7} {'round trip':>11}"
    )
    for op, part in http_split(results).items():
        print(
            f"  {op:28} {part['in_process_ms']:8.1f} {part['result_ms']:+8.1f} "
            f"{part['server_ms']:8.1f} {part['validation_ms']:10.1f} {part['rest_ms']:7.1f} "
            f"{part['round_trip_ms']:11.1f}"
        )
    print(
        "  in-proc: the use case in the same rounds; +result: what mapping and serializing\n"
        "  the answer adds (back to back); server: the server's own call_tool (/metrics; the\n"
        "  two get variants share one figure, apportioned by their in-process means);\n"
        "  validation: the MCP client checking the result against the tool's output schema\n"
        "  (jsonschema); rest: round trip less server and validation (JSON-RPC over\n"
        "  Streamable HTTP, both sides)"
    )


def print_report(results: dict[str, Any]) -> None:
    ops = results["latency"]
    print()
    code = results["code"]
    print(f"code: {code['git_head'][:12]} {code['git_head_subject']!r}, {code['source']}")
    if code["uncommitted_in_src"]:
        changed = len(code["uncommitted_in_src"].splitlines())
        print(f"      with {changed} uncommitted or untracked paths in src/")
    env = results["environment"]
    print(
        f"machine: {env['cpu']}, {env['cores']} cores, {env['memory_mb']} MB; load at start "
        f"{env['loadavg_at_start'][0]:.2f}, at end {results['loadavg_at_end'][0]:.2f}; "
        f"SQLite {env['sqlite']}, {env['notmuch']}"
    )
    store = results["store"]
    corpus = store["corpus"]
    sync = store["sync"]
    nm = store["notmuch"]
    facts = results["facts"]
    print(
        f"corpus: {corpus['messages']} messages, {corpus['octets'] / 1e6:.0f} MB "
        f"(median {corpus['median_octets'] / 1e3:.1f} KB, p95 {corpus['p95_octets'] / 1e3:.1f} "
        f"KB), folders {corpus['folders']}, {facts['conversations']} conversations "
        f"(largest {facts['largest_conversation']})"
    )
    built = "reused, built " + store["built_at"] if store["reused"] else "built in this run"
    print(f"setup ({built}):")
    print(f"  generate + write Maildir   {corpus['generate_and_write_s']:8.1f} s")
    print(
        f"  our sync (run_once)        {sync['sync_wall_s']:8.1f} s  "
        f"({sync['messages_per_s']:.0f} msg/s; SQLite {sync['database_octets'] / 1e6:.0f} MB, "
        f"content {sync['content_octets'] / 1e6:.0f} MB)"
    )
    print(
        f"  notmuch new                {nm['notmuch_new_s']:8.1f} s  "
        f"(+ tag Junk {nm['notmuch_tag_junk_s']:.1f} s; database "
        f"{nm['database_octets'] / 1e6:.0f} MB)"
    )
    floor = results["process_floor"]
    print(
        f"  process start floor (/bin/true from Python): p50 {floor['p50_ms']:.2f} ms, "
        f"p95 {floor['p95_ms']:.2f} ms"
    )
    print()
    print(
        f"latency, ms ({results['iterations']} calls per operation after "
        f"{results['warmup']} warm-up rounds; results = mean items returned)"
    )
    header = (
        f"{'operation / variant':36} {'in-proc':>7} {'p95':>7} {'HTTP':>7} {'p95':>7} "
        f"{'notmuch':>7} {'p95':>7} {'in/nm':>6} {'HTTP/nm':>7}  results ours/nm"
    )
    print(header)
    print("-" * len(header))
    for op in OPERATIONS:
        entry = ops[op]
        rows = [(op, entry["all"], True)]
        rows += [(f"  {v}", sides, False) for v, sides in entry["variants"].items()]
        for label, sides, bold in rows:
            inproc, http, nm_ = sides.get("in-process"), sides.get("http"), sides.get("notmuch")
            results_text = (
                f"{inproc['mean_results']:.1f}/{nm_['mean_results']:.1f}" if inproc and nm_ else ""
            )
            name = label if len(label) <= 36 else label[:35] + "…"
            print(
                f"{name:36} {fmt(inproc and inproc['p50_ms'])} {fmt(inproc and inproc['p95_ms'])} "
                f"{fmt(http and http['p50_ms'])} {fmt(http and http['p95_ms'])} "
                f"{fmt(nm_ and nm_['p50_ms'])} {fmt(nm_ and nm_['p95_ms'])} "
                f"{fmt(ratio(inproc, nm_), 6, 2)} {fmt(ratio(http, nm_), 7, 2)}  {results_text}"
            )
            if bold and "notmuch --format=json" in sides:
                js = sides["notmuch --format=json"]
                print(
                    f"{'  (notmuch --format=json)':36} {'':7} {'':7} {'':7} {'':7} "
                    f"{fmt(js['p50_ms'])} {fmt(js['p95_ms'])} "
                    f"{fmt(ratio(inproc, js), 6, 2)} {fmt(ratio(http, js), 7, 2)}"
                )
    print(
        "  notmuch: search/list answer threads (--output=summary), get is notmuch show "
        "--format=json --entire-thread=false; ours answer messages"
    )
    print()
    print(f"{'query':22} {'kind':24} {'ours: msgs':>11} {'notmuch: msgs':>14} {'threads':>8}")
    for q in facts["queries"]:
        print(
            f"{q['query']:22} {q['kind']:24} {q['ours_matching_messages']:11d} "
            f"{q['notmuch_matching_messages']:14d} {q['notmuch_matching_threads']:8d}"
        )
    print()
    print(f"{'check':44} {'value':>9} {'target':>9}  met")
    for name, value, target, ok in results["checks"]:
        print(f"{name:44} {value:9.2f} {target:>9}  {'yes' if ok else 'NO'}")
    if "breakdown" in results:
        print()
        print("where the in-process time goes (SQL = time in cursor.execute):")
        print(f"  {'operation | variant':52} {'p50 ms':>7} {'SQL ms':>7} {'stmts':>6}")
        for name, entry in results["breakdown"].items():
            print(
                f"  {name[:52]:52} {entry['wall']['p50_ms']:7.2f} "
                f"{entry['sql_ms_per_call']:7.2f} {entry['statements_per_call']:6d}"
            )
        print()
        print_http_split(results)
        print()
        print("slowest statement of the slowest variant of each operation, with its plan:")
        for op in OPERATIONS:
            mine = {k: v for k, v in results["breakdown"].items() if k.startswith(op + " |")}
            if not mine:
                continue
            name, entry = max(mine.items(), key=lambda kv: kv[1]["wall"]["p50_ms"])
            if not entry["slowest_statements"]:
                continue
            top = entry["slowest_statements"][0]
            statement = top["statement"]
            if len(statement) > 300:
                statement = statement[:297] + "..."
            print(f"  {name}: {top['mean_ms']:.2f} ms per call")
            print(f"    {statement}")
            for line in top["plan"]:
                print(f"      {line}")


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=200, help="calls per operation")
    parser.add_argument("--warmup", type=int, default=24, help="rounds before measuring")
    parser.add_argument(
        "--store-dir",
        type=Path,
        help="keep the store here and reuse it when it holds the same messages and seed",
    )
    parser.add_argument("--no-profile", action="store_true", help="skip SQL plans and profiles")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument(
        "--build-only", action="store_true", help="build (or check) the store, measure nothing"
    )
    parser.add_argument(
        "--report", type=Path, help="print the report of a results JSON again, run nothing"
    )
    parser.add_argument("--child-sync", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_sync:
        child_sync(args.child_sync)
        return 0
    if args.report:
        print_report(json.loads(args.report.read_text()))
        return 0
    if not shutil.which("notmuch"):
        raise SystemExit("notmuch is not installed (apt-get install notmuch)")

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mailfathom-read-bench-", dir="/var/tmp"))
    code = support.snapshot_code(work)
    code_dir = Path(code["snapshot"])
    sys.path.insert(0, str(code_dir / "src"))
    results: dict[str, Any] = {
        "benchmark": "read_latency",
        "started_at": stamp,
        "command": " ".join(["uv run python bench/read_latency.py", *sys.argv[1:]]),
        "code": code,
        "environment": environment({"notmuch": ["notmuch", "--version"]}),
        "iterations": args.iterations,
        "warmup": args.warmup,
        "targets": TARGETS,
    }
    log(f"code: {code['git_head'][:10]} {code['git_head_subject']!r} ({code['source']})")
    store_dir = (args.store_dir or work / "store").resolve()
    server = None
    services = None
    try:
        results["store"] = prepare_store(store_dir, args.messages, args.seed, code_dir)
        results["store_dir"] = str(store_dir)
        if args.build_only:
            log(f"store ready in {store_dir}")
            return 0
        paths = store_paths(store_dir)
        env = support.notmuch_env(paths["notmuch_config"])

        key = "bench-" + secrets.token_urlsafe(24)
        port = support.free_port()
        config_path = write_config(store_dir, port, key)
        server_log = work / "server.log"
        server = start_server(config_path, port, code_dir, server_log)
        log(f"mailfathom serve listening on 127.0.0.1:{port} (pid {server.pid})")

        from mailfathom.adapters.config.toml_loader import load_config
        from mailfathom.bootstrap import Services

        services = Services.open(load_config(config_path))
        rounds = args.warmup + args.iterations
        workload = Workload(services, env, rounds, args.seed)
        calls = workload.build()
        results["facts"] = workload.facts
        results["process_floor"] = process_floor()

        import anyio

        samples, session = anyio.run(
            measure, calls, f"http://127.0.0.1:{port}/mcp", key, env, args.warmup, args.iterations
        )
        results["http_session"] = session
        results["latency"] = aggregate(samples)
        results["samples_ms"] = {
            " | ".join(k): [round(s * 1000, 3) for s in v] for k, v in samples.seconds.items()
        }
        if not args.no_profile:
            log("SQL statements and plans per operation")
            results["breakdown"] = breakdown(services, calls)
            slowest = {
                op: max(entry["variants"].items(), key=lambda kv: kv[1]["in-process"]["p50_ms"])[0]
                for op, entry in results["latency"].items()
            }
            log("pyinstrument profiles per operation (in-process)")
            results["profiles"] = profile(calls, stamp, 60, slowest)
            log("pyinstrument profiles of the MCP client's side of HTTP calls")
            results["profiles_http_client"] = anyio.run(
                profile_http, calls, f"http://127.0.0.1:{port}/mcp", key, stamp, 40
            )
    finally:
        if services is not None:
            services.close()
        if server is not None:
            support.stop_process(server)
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    results["checks"] = checks(results["latency"])
    results["http_split"] = http_split(results)
    results["finished_at"] = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    results["loadavg_at_end"] = os.getloadavg()
    out = RESULTS_DIR / f"read_latency-{stamp}.json"
    out.write_text(json.dumps(results, indent=2, default=str, ensure_ascii=False))
    print_report(results)
    print(f"\nresults: {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
