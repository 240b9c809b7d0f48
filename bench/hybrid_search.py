"""Hybrid search_emails against lexical search_emails on the same 100,000-message store.

    uv run --frozen python bench/hybrid_search.py [--messages 100000] [--rounds 3]
        [--store-dir DIR] [--build-only] [--json FILE]

A store of N generated messages (`mailgen.py`, the read-latency benchmark's corpus) is built
once and kept in --store-dir (a directory under the system's temporary directory unless told
otherwise; later runs asking for the same messages and seed reuse it): the messages are
written into a local account's Maildir, one synchronization (`read_latency.py`'s child, in
its own process) stores and indexes them, and every message is embedded at 384 dimensions
(the default profile's) by the tests' hashed-words embedder through `StoredMailEmbedding.run`,
as `mfctl mailbox embed` does. The scan's cost depends on the rows and the dimension, not on
the model, so a fast deterministic embedder stands in for the transformer; each query is
placed by the same embedder.

Then two `Services` are opened on that store: one without an embedder (search is lexical,
`retrievalMode: lexical`) and one with it (the placement is `available`, every search is
hybrid). The search_emails use case (`Services.reading().search.search`, a caller holding
every permission) is called for each query of the workload, words and phrases of the
generated mail, each alone, under a sender and under a folder (with --date-range also under
the middle third of the corpus's time span). The two sides are interleaved call by call,
which goes first alternating, so that load from other work on the machine falls on both
alike. The first hybrid call reads the vector matrix into the
process and is reported apart; one warm-up round precedes the timed ones. p50 and p95 of
each side and their ratio (hybrid / lexical) are printed, overall and per filter; then the
same on a copy of the store keeping each message's first --keep-passages passages.
--breakdown adds the time spent in each part of a search; --agreement compares each hybrid
page with the page an exact ranking (every passage of every eligible message compared) gives.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO / "tests")]

import read_latency_support as support  # noqa: E402
from machine import environment, log  # noqa: E402

from fakes.embedder import FakeEmbedder  # noqa: E402
from mailfathom.adapters.config.toml_loader import load_config  # noqa: E402
from mailfathom.app.sync.embedding import StoredMailEmbedding  # noqa: E402
from mailfathom.bootstrap import Services  # noqa: E402

STORE_FORMAT = 1
MARKER = "hybrid-store.json"
DIMENSION = 384


def bench_embedder() -> FakeEmbedder:
    """The embedder of the store and of every query: hashed words at the default profile's
    dimension."""
    return FakeEmbedder(dimension=DIMENSION)


# --------------------------------------------------------------------------- the store


def _clear(store_dir: Path) -> None:
    for name in ("data", MARKER, "mailfathom.toml"):
        target = store_dir / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)


def prepare_store(store_dir: Path, messages: int, seed: int) -> dict[str, Any]:
    """Build the store, or reuse it when it already holds what is asked for."""
    marker_path = store_dir / MARKER
    if marker_path.exists():
        found = json.loads(marker_path.read_text())
        wanted = {"format": STORE_FORMAT, "messages": messages, "seed": seed}
        if all(found.get(k) == v for k, v in wanted.items()) and found.get("complete"):
            log(f"reusing the store in {store_dir} (built {found['built_at']})")
            return {**found, "reused": True}
        log(f"the store in {store_dir} holds another corpus or an unfinished build; rebuilding")
        _clear(store_dir)
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
    marker_path.write_text(json.dumps(marker, indent=2))
    data = store_dir / "data"
    config = store_dir / "mailfathom.toml"
    digest = hashlib.sha256(secrets.token_hex(16).encode()).hexdigest()
    config.write_text(support.config_text(data, support.free_port(), digest), "utf-8")

    log(f"generating {messages} messages")
    marker["corpus"] = support.write_maildir(data / "local" / support.ACCOUNT_ID, messages, seed)
    log(f"generated in {marker['corpus']['generate_and_write_s']:.1f} s; synchronizing")
    out = subprocess.run(
        [sys.executable, str(BENCH_DIR / "read_latency.py"), "--child-sync", str(config)],
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        cwd=str(REPO),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"the synchronization failed:\n{out.stderr[-3000:]}")
    marker["sync"] = json.loads(out.stdout.strip().splitlines()[-1])
    if marker["sync"]["stored"] != messages:
        raise RuntimeError(f"the store holds {marker['sync']['stored']} messages, not {messages}")
    log(f"synchronized in {marker['sync']['sync_wall_s']:.1f} s; embedding")
    marker["embedding"] = embed_store(config)
    log(f"embedded: {marker['embedding']}")
    marker["complete"] = True
    marker_path.write_text(json.dumps(marker, indent=2))
    return {**marker, "reused": False}


def embed_store(config: Path) -> dict[str, Any]:
    """Every message's passages, as `mfctl mailbox embed` fills the active generation."""
    with Services.open(load_config(config)) as services:
        embedder = bench_embedder()
        embedding = StoredMailEmbedding(services.passage_store(), embedder, clock=services.clock)
        cpu, started = time.process_time(), time.perf_counter()
        report = embedding.run()
        seconds = time.perf_counter() - started
        return {
            "embedder": f"{embedder.model} ({DIMENSION} dim.)",
            "messages": report.messages,
            "passages": report.passages,
            "seconds": seconds,
            "cpu_s": time.process_time() - cpu,
            "passages_per_s": report.passages / seconds,
            "filled": report.state.filled,
            "loadavg_after": os.getloadavg(),
        }


def trimmed_store(store_dir: Path, keep: int) -> dict[str, Any]:
    """A copy of the store whose messages keep only their first `keep` passage vectors: the
    generated bodies are long (about seven passages a message), real mail is not (the
    labelled collection averages 1.40), and the scan's cost is its rows. The mail and the
    content files are shared with the store by hard links; the database is copied."""
    import sqlean

    target = store_dir / f"first-{keep}-passages"
    marker_path = target / "trimmed.json"
    if marker_path.exists():
        found: dict[str, Any] = json.loads(marker_path.read_text())
        log(f"reusing the trimmed store in {target}")
        return found
    shutil.rmtree(target, ignore_errors=True)
    data = target / "data"
    data.mkdir(parents=True)
    for part in ("content", "local"):
        subprocess.run(["cp", "-al", str(store_dir / "data" / part), str(data / part)], check=True)
    source = sqlean.connect(str(store_dir / "data" / "mailfathom.sqlite3"))
    source.execute(f"VACUUM INTO '{data / 'mailfathom.sqlite3'}'")
    source.close()
    copy = sqlean.connect(str(data / "mailfathom.sqlite3"))
    with copy:
        copy.execute("DELETE FROM passage_vectors WHERE position >= ?", (keep,))
    (passages,) = copy.execute("SELECT count(*) FROM passage_vectors").fetchone()
    copy.close()
    digest = hashlib.sha256(secrets.token_hex(16).encode()).hexdigest()
    config = target / "mailfathom.toml"
    config.write_text(support.config_text(data, support.free_port(), digest), "utf-8")
    found = {"config": str(config), "keep": keep, "passages": int(passages)}
    marker_path.write_text(json.dumps(found, indent=2))
    return found


# --------------------------------------------------------------------------- what is called

QUERIES = (
    # topics of the generated threads, whole and in part
    "quarterly planning",
    "release checklist",
    "budget for the offsite",
    "hiring loop",
    "database migration",
    "customer feedback",
    "security review",
    "conference talk",
    "on-call rotation",
    "design document",
    "invoice 2291",
    "team lunch",
    "roadmap draft",
    "incident follow-up",
    "vendor contract",
    "onboarding notes",
    "Überprüfung des Angebots",
    "réunion de lundi",
    # words of the bodies, alone and in pairs
    "review",
    "customers",
    "timeline",
    "dashboard",
    "latency",
    "benchmark",
    "regression",
    "rollout",
    "schedule",
    "summary",
    "owner",
    "comments",
    "migration rollout",
    "invoice contract",
    "quarterly dashboard",
    "latency regression",
    "clear owner",
    "second option",
    "short summary",
    "numbers before friday",
    "draft is attached",
    "stay aligned",
    # people, accents, rare words and none
    "Hopper",
    "Grace Hopper",
    "Kierkegaard",
    "Lovelace",
    "Müller",
    "smörgåsbord",
    "café",
    "Straße",
    "zeppelin",
    "water damage in the flat",
)
SENDER = "grace@example.net"
FOLDER = "Archive"


@dataclass(frozen=True)
class Variant:
    name: str
    selection: dict[str, Any]


def variants(corpus: dict[str, Any], date_range: bool = False) -> list[Variant]:
    """No filter, one sender, one folder, and with `date_range` the middle third of the
    corpus's time span (left out by default: at 100,000 messages it took about 1 s lexical
    and 70 s hybrid a search, which a run of minutes cannot afford)."""
    found = [
        Variant("no filter", {}),
        Variant("sender", {"sender_address": SENDER}),
        Variant("folder", {"folders": [FOLDER]}),
    ]
    if date_range:
        first = datetime.fromisoformat(corpus["first_received"]).replace(tzinfo=UTC)
        last = datetime.fromisoformat(corpus["last_received"]).replace(tzinfo=UTC)
        third = (last - first) / 3
        found.append(
            Variant(
                "date range",
                {"received_on_or_after": first + third, "received_before": last - third},
            )
        )
    return found


class Side:
    """One `Services` on the store and its search use case, lexical or hybrid."""

    def __init__(self, services: Services, mode: str) -> None:
        from mailfathom.domain.access import ALL_PERMISSIONS, Caller

        self.services = services
        self.mode = mode
        self.search = services.reading().search
        self.caller = Caller(permissions=ALL_PERMISSIONS, label="bench")

    def call(self, query: str, variant: Variant) -> int:
        return len(self.page(query, variant))

    def page(self, query: str, variant: Variant) -> list[str]:
        from mailfathom.app.reading.search_emails import SearchRequest
        from mailfathom.app.shared.mailbox_selection import SelectionInput

        request = SearchRequest(query_text=query, selection=SelectionInput(**variant.selection))
        answer = self.search.search(self.caller, request)
        if answer.retrieval_mode.value != self.mode:
            raise RuntimeError(
                f"the {self.mode} side answered {answer.retrieval_mode.value} "
                f"({answer.semantic_search.value})"
            )
        return [str(m.summary.stored_email_id) for m in answer.matches]


@contextmanager
def sides(config: Path) -> Iterator[tuple[Side, Side]]:
    deployment = load_config(config)
    with Services.open(deployment) as lexical, Services.open(deployment) as hybrid:
        hybrid.embedder = bench_embedder()
        yield Side(lexical, "lexical"), Side(hybrid, "hybrid")


def timed(side: Side, query: str, variant: Variant) -> tuple[float, int]:
    started = time.perf_counter()
    found = side.call(query, variant)
    return time.perf_counter() - started, found


def measure(config: Path, corpus: dict[str, Any], rounds: int, dated: bool) -> dict[str, Any]:
    kinds = variants(corpus, dated)
    calls = [(q, v) for v in kinds for q in QUERIES]
    seconds: dict[str, dict[str, list[float]]] = {
        "lexical": {v.name: [] for v in kinds},
        "hybrid": {v.name: [] for v in kinds},
    }
    found: dict[str, dict[str, int]] = {"lexical": {}, "hybrid": {}}
    out: dict[str, Any] = {"queries": len(QUERIES), "variants": [v.name for v in kinds]}
    with sides(config) as (lexical, hybrid):
        out["first_hybrid_call_ms"] = timed(hybrid, QUERIES[0], kinds[0])[0] * 1000
        out["first_lexical_call_ms"] = timed(lexical, QUERIES[0], kinds[0])[0] * 1000
        log(
            f"first calls: hybrid {out['first_hybrid_call_ms']:.0f} ms (reads the matrix), "
            f"lexical {out['first_lexical_call_ms']:.0f} ms"
        )
        loads = [os.getloadavg()]
        for number in range(rounds + 1):
            for index, (query, variant) in enumerate(calls):
                pair = (lexical, hybrid) if (index + number) % 2 == 0 else (hybrid, lexical)
                for side in pair:
                    took, count = timed(side, query, variant)
                    if number > 0:  # round 0 warms up
                        seconds[side.mode][variant.name].append(took)
                        found[side.mode][f"{variant.name}: {query}"] = count
            loads.append(os.getloadavg())
            log(f"round {number} done{' (warm-up)' if number == 0 else ''}; load {loads[-1]}")
    out["loadavg"] = loads
    out["matches_mean"] = {
        mode: sum(counts.values()) / max(1, len(counts)) for mode, counts in found.items()
    }
    table: dict[str, Any] = {}
    for name in [v.name for v in kinds] + ["all"]:
        picked = {
            mode: [s for v, values in by.items() if name in ("all", v) for s in values]
            for mode, by in seconds.items()
        }
        lex, hyb = support.summary_ms(picked["lexical"]), support.summary_ms(picked["hybrid"])
        table[name] = {
            "lexical": lex,
            "hybrid": hyb,
            "ratio_p50": hyb["p50_ms"] / lex["p50_ms"],
            "ratio_p95": hyb["p95_ms"] / lex["p95_ms"],
        }
    out["table"] = table
    return out


def print_table(measured: dict[str, Any]) -> None:
    print(
        f"{'filter':<12} {'lexical p50':>12} {'p95':>8} {'hybrid p50':>11} {'p95':>8} "
        f"{'p50 ratio':>10} {'p95 ratio':>10}"
    )
    for name, row in measured["table"].items():
        lex, hyb = row["lexical"], row["hybrid"]
        print(
            f"{name:<12} {lex['p50_ms']:>9.1f} ms {lex['p95_ms']:>5.1f} ms "
            f"{hyb['p50_ms']:>8.1f} ms {hyb['p95_ms']:>5.1f} ms "
            f"{row['ratio_p50']:>10.2f} {row['ratio_p95']:>10.2f}"
        )


# --------------------------------------------------------------------------- where the time goes

PARTS = (
    ("QueryPlacement.place", "mailfathom.app.shared.query_placement", "QueryPlacement", "place"),
    ("store: lexical search", "mailfathom.adapters.sql.reading", "SqlReadView", "search"),
    ("store: lexical ranking", "mailfathom.adapters.sql.reading", "SqlReadView", "ranking"),
    ("store: start nearest", "mailfathom.adapters.sql.reading", "SqlReadView", "start_nearest"),
    (
        "store: nearest result",
        "mailfathom.adapters.sql.vector_reading",
        "NearestUnderWay",
        "result",
    ),
    ("store: summaries_of", "mailfathom.adapters.sql.reading", "SqlReadView", "summaries_of"),
    ("store: indexed_texts", "mailfathom.adapters.sql.reading", "SqlReadView", "indexed_texts"),
    ("matrix: pooled", "mailfathom.adapters.vectors.scan", "Ranking", "_pooled_scores"),
    ("matrix: passages", "mailfathom.adapters.vectors.scan", "Ranking", "_passages"),
    ("matrix: best", "mailfathom.adapters.vectors.scan", "Ranking", "best"),
)


class Breakdown:
    """Time spent in each part of a search, per side, by wrapping the methods of `PARTS` for
    the length of a `with` block."""

    def __init__(self) -> None:
        self.mode = ""
        self.spent: dict[str, dict[str, float]] = {}
        self._undo: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> Breakdown:
        import importlib

        for label, module, owner, name in PARTS:
            cls = getattr(importlib.import_module(module), owner)
            original = getattr(cls, name)
            setattr(cls, name, self._timing(label, original))
            self._undo.append((cls, name, original))
        return self

    def __exit__(self, *exc: object) -> None:
        for cls, name, original in reversed(self._undo):
            setattr(cls, name, original)
        self._undo.clear()

    def _timing(self, label: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def timed_part(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                by_mode = self.spent.setdefault(self.mode, {})
                by_mode[label] = by_mode.get(label, 0.0) + time.perf_counter() - started

        return timed_part


def breakdown(config: Path, corpus: dict[str, Any], dated: bool) -> dict[str, Any]:
    """Milliseconds per search in each part, and the whole call, for each side and filter,
    one round after a warm-up."""
    out: dict[str, Any] = {}
    with sides(config) as (lexical, hybrid):
        for variant in variants(corpus, dated):
            for side in (lexical, hybrid):
                for query in QUERIES:
                    side.call(query, variant)
            parts = Breakdown()
            with parts:
                for side in (lexical, hybrid):
                    parts.mode = side.mode
                    started = time.perf_counter()
                    for query in QUERIES:
                        side.call(query, variant)
                    whole = time.perf_counter() - started
                    spent = parts.spent.get(side.mode, {})
                    out[f"{variant.name}, {side.mode}"] = {
                        "whole": whole * 1000 / len(QUERIES),
                        **{k: v * 1000 / len(QUERIES) for k, v in spent.items()},
                    }
            parts.spent.clear()
    return out


def print_breakdown(found: dict[str, Any]) -> None:
    print(
        "\nms per search, by part (one round; the matrix's parts run on a thread of their own,"
        " beside the lexical ranking)"
    )
    for key, parts in found.items():
        print(f"  {key}: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()))


def agreement(config: Path, corpus: dict[str, Any], dated: bool) -> dict[str, Any]:
    """How far the hybrid pages answered with the pooled ranking (over more than
    `EXACT_MESSAGES` eligible messages) agree with those of the exact one, every passage of
    every eligible message compared: per number of candidates (`CANDIDATES` and its halves)
    and filter, the share of the exact page's matches found on the page (mean, and lowest
    over the queries), and the share of queries whose page is the same, in the same order."""
    from mailfathom.adapters.sql.vector_cache import VectorCache
    from mailfathom.adapters.vectors.scan import CANDIDATES

    deployment = load_config(config)
    kinds = variants(corpus, dated)

    def pages(cache: VectorCache) -> dict[tuple[str, str], list[str]]:
        with Services.open(deployment) as services:
            services.vectors = cache
            services.embedder = bench_embedder()
            side = Side(services, "hybrid")
            return {(v.name, q): side.page(q, v) for v in kinds for q in QUERIES}

    exact = pages(VectorCache(exact_messages=10**9))
    out: dict[str, Any] = {}
    for candidates in (CANDIDATES // 4, CANDIDATES // 2, CANDIDATES):
        pooled = pages(VectorCache(candidates=candidates))
        for variant in kinds:
            shared: list[float] = []
            same = 0
            for query in QUERIES:
                wanted, found = exact[variant.name, query], pooled[variant.name, query]
                shared.append(len(set(wanted) & set(found)) / len(wanted) if wanted else 1.0)
                same += wanted == found
            out[f"{candidates} candidates, {variant.name}"] = {
                "page_overlap": sum(shared) / len(shared),
                "min_page_overlap": min(shared),
                "same_pages": same / len(QUERIES),
            }
    return out


def print_agreement(found: dict[str, Any]) -> None:
    print("\nhybrid pages, pooled ranking against the exact one (share of the exact page found;")
    print("lowest over the queries; share of pages the same, in order)")
    for name, row in found.items():
        print(
            f"  {name}: {row['page_overlap']:.3f}; {row['min_page_overlap']:.3f}; "
            f"{row['same_pages']:.3f}"
        )


def default_store_dir(messages: int, seed: int) -> Path:
    return Path(tempfile.gettempdir()) / "mailfathom-bench" / f"hybrid-{messages}-{seed}"


def report(label: str, config: Path, store: dict[str, Any], passages: int, args: Any) -> Any:
    log(f"{label}: {store['messages']} messages, {passages} passages at {DIMENSION} dimensions")
    found: dict[str, Any] = {"passages": passages}
    found["search"] = measure(config, store["corpus"], args.rounds, args.date_range)
    search = found["search"]
    print(
        f"\n{label}: {store['messages']} messages, {passages} passages "
        f"({passages / store['messages']:.2f} a message), {search['queries']} queries x "
        f"{len(search['variants'])} filters x {args.rounds} rounds"
    )
    print(f"load average before and after each round: {search['loadavg']}")
    print(
        f"first call: hybrid {search['first_hybrid_call_ms']:.0f} ms (reads the matrix), "
        f"lexical {search['first_lexical_call_ms']:.0f} ms"
    )
    print_table(search)
    if args.breakdown:
        found["breakdown"] = breakdown(config, store["corpus"], args.date_range)
        print_breakdown(found["breakdown"])
    if args.agreement:
        found["agreement"] = agreement(config, store["corpus"], args.date_range)
        print_agreement(found["agreement"])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store-dir", type=Path)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument(
        "--keep-passages",
        type=int,
        default=2,
        help="also measure a copy keeping each message's first N passages (0: do not)",
    )
    parser.add_argument("--breakdown", action="store_true", help="also time each part")
    parser.add_argument("--date-range", action="store_true", help="also under a date range")
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="also compare the hybrid pages with those of an exact ranking",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    store_dir = args.store_dir or default_store_dir(args.messages, args.seed)
    results: dict[str, Any] = {"environment": environment({})}
    store = results["store"] = prepare_store(store_dir, args.messages, args.seed)
    if args.build_only:
        print(json.dumps(results, indent=2))
        return 0
    config = store_dir / "mailfathom.toml"
    passages = store["embedding"]["passages"]
    results["every passage"] = report("every passage", config, store, passages, args)
    if args.keep_passages > 0:
        trimmed = trimmed_store(store_dir, args.keep_passages)
        label = f"first {args.keep_passages} passages"
        results[label] = report(label, Path(trimmed["config"]), store, trimmed["passages"], args)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2, default=str) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
