"""The exact scan behind the search filters: numpy over the int8 matrix against sqlite-vec.

    uv run --frozen python bench/vector_scan.py [--messages 100000] [--dimension 384]
        [--passages 1.5] [--queries 30] [--postgres] [--json FILE]

A migrated store is filled with synthetic rows: `--messages` messages over three folders,
1,000 senders (so a sender filter leaves about 0.1 % of the mail), and about `--passages`
random unit vectors per message (one to three), stored as the store stores them (int8 and a
scale). Each method answers the same queries for the 20 nearest messages, a message scored by
its nearest passage, twice: over the three folders, and under a sender filter.

  numpy       `SqlMailboxReader.nearest`: the process's matrix, the filter asked of
              `messages` (the first call of a reader, which reads the matrix, is timed
              apart)
  sqlite-vec  one SQL statement: `vec_distance_cosine` over every passage of the messages
              the filter leaves, grouped by message (int8 vectors, as stored)

Both must answer nearly the same messages (sqlite-vec compares an int8 copy of the query, so
near ties may fall otherwise); the script stops below 90 % agreement. Ratios are sqlite-vec
over numpy, measured in this run. With --postgres the numpy path is measured on PostgreSQL
too (bytea rows, the same matrix).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR)]

import numpy as np  # noqa: E402
import sqlalchemy as sa  # noqa: E402
import sqlean  # noqa: E402
import sqlite_vec  # noqa: E402
from machine import environment, log, stores  # noqa: E402

from mailfathom.adapters.sql import migrate  # noqa: E402
from mailfathom.adapters.sql.engine import create_store_engine  # noqa: E402
from mailfathom.adapters.sql.reading import SqlMailboxReader  # noqa: E402
from mailfathom.app.shared.stored_mail import SummaryFilter  # noqa: E402

WINDOW = 20
SENDERS = 1000
GENERATION = "synthetic@1/{dimension}"


def fill(engine: sa.Engine, messages: int, dimension: int, per_message: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with engine.begin() as c:
        c.exec_driver_sql(
            "INSERT INTO accounts (account_id, display_name, kind, created_at) "
            "VALUES ('bench', 'bench', 'local', '2026-01-01 00:00:00.000000')"
        )
        for folder, alias in enumerate(("INBOX", "Archive", "Lists"), start=1):
            c.execute(
                sa.text(
                    "INSERT INTO folders (folder_id, account_id, remote_name, alias, role, "
                    "visible_to_tools) VALUES (:f, 'bench', :a, :a, NULL, :v)"
                ),
                {"f": folder, "a": alias, "v": True},
            )
        c.execute(
            sa.text(
                "INSERT INTO embedding_generations (generation_id, generation, model, version, "
                "dimension, created_at) VALUES (1, :g, 'synthetic', '1', :d, "
                "'2026-01-01 00:00:00.000000')"
            ),
            {"g": GENERATION.format(dimension=dimension), "d": dimension},
        )
    columns = (
        "seq, stored_email_id, account_id, folder_id, uidvalidity, uid, size_octets, seen, "
        "flagged, answered, draft, deleted, content_state, is_encrypted, "
        "has_unverified_signature, has_unexpanded_tnef, stored_at, sender_key"
    )
    chunk = 10_000
    vector_id = 0
    for start in range(1, messages + 1, chunk):
        seqs = range(start, min(start + chunk, messages + 1))
        postgres = engine.dialect.name == "postgresql"
        rows = [
            (
                seq,
                uuid.uuid4() if postgres else uuid.uuid4().hex,
                "bench",
                seq % 3 + 1,
                1,
                seq,
                1000,
                False,
                False,
                False,
                False,
                False,
                "stored",
                False,
                False,
                False,
                "2026-01-01 00:00:00.000000",
                f"sender{seq % SENDERS}@example.org",
            )
            for seq in seqs
        ]
        counts = np.clip(rng.poisson(per_message - 1, len(rows)) + 1, 1, 8)
        total = int(counts.sum())
        raw = rng.standard_normal((total, dimension)).astype(np.float32)
        raw /= np.linalg.norm(raw, axis=1, keepdims=True)
        scale = np.abs(raw).max(axis=1) / 127.0
        quantized = np.clip(np.rint(raw / scale[:, None]), -127, 127).astype(np.int8)
        vectors = []
        row = 0
        for seq, count in zip(seqs, counts, strict=True):
            for position in range(int(count)):
                vector_id += 1
                vectors.append(
                    (
                        vector_id,
                        1,
                        seq,
                        position,
                        float(scale[row]),
                        quantized[row].tobytes(),
                    )
                )
                row += 1
        marks = "%s" if postgres else "?"
        with engine.begin() as c:
            c.exec_driver_sql(
                f"INSERT INTO messages ({columns}) VALUES ({', '.join([marks] * 18)})", rows
            )
            c.exec_driver_sql(
                "INSERT INTO passage_vectors (vector_id, generation_id, seq, position, scale, "
                f"vector) VALUES ({', '.join([marks] * 6)})",
                vectors,
            )
    with engine.begin() as c:
        c.exec_driver_sql("ANALYZE")


def timed(function: Callable[[Any], Any], queries: list[Any]) -> tuple[list[float], list[Any]]:
    seconds, answers = [], []
    for query in queries:
        started = time.perf_counter()
        answers.append(function(query))
        seconds.append(time.perf_counter() - started)
    return seconds, answers


def numpy_method(
    engine: sa.Engine, dimension: int, sender: str | None
) -> Callable[[Any], list[int]]:
    reader = SqlMailboxReader(engine)
    selection = SummaryFilter(folder_ids=(1, 2, 3), sender_address=sender)
    generation = GENERATION.format(dimension=dimension)

    def run(query: Any) -> list[int]:
        return [n.seq for n in reader.nearest(generation, query.tolist(), selection, WINDOW)]

    return run


def sqlite_vec_method(path: str, sender: str | None) -> Callable[[Any], list[int]]:
    connection = sqlean.connect(path)
    connection.enable_load_extension(True)
    sqlite_vec.load(connection)
    connection.enable_load_extension(False)
    condition = "AND m.sender_key = ?" if sender else ""
    statement = (
        "SELECT pv.seq, max(1.0 - vec_distance_cosine(vec_int8(pv.vector), vec_int8(?))) AS s "
        "FROM passage_vectors pv JOIN messages m ON m.seq = pv.seq "
        f"WHERE pv.generation_id = 1 AND m.folder_id IN (1, 2, 3) {condition} "
        "GROUP BY pv.seq ORDER BY s DESC, pv.seq DESC LIMIT ?"
    )

    def run(query: Any) -> list[int]:
        scaled = np.clip(np.rint(query / (np.abs(query).max() / 127.0)), -127, 127)
        octets = scaled.astype(np.int8).tobytes()
        parameters = (octets, sender, WINDOW) if sender else (octets, WINDOW)
        return [int(r[0]) for r in connection.execute(statement, parameters)]

    return run


def summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    return {"p50_ms": statistics.median(ms), "mean_ms": statistics.fmean(ms), "max_ms": ms[-1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--passages", type=float, default=1.5)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed + 1)
    queries = [rng.standard_normal(args.dimension).astype(np.float32) for _ in range(args.queries)]
    results: dict[str, Any] = {
        "messages": args.messages,
        "dimension": args.dimension,
        "environment": environment({}),
    }
    sender = "sender7@example.org"
    with (
        tempfile.TemporaryDirectory() as work,
        stores(Path(work), args.postgres, "vectors") as urls,
    ):
        for label, url in urls:
            engine = create_store_engine(url)
            migrate.upgrade(engine)
            started = time.perf_counter()
            fill(engine, args.messages, args.dimension, args.passages, args.seed)
            log(f"{label}: filled in {time.perf_counter() - started:.1f} s")
            with engine.connect() as c:
                stored = c.exec_driver_sql("SELECT count(*) FROM passage_vectors").scalar_one()
            results[f"{label}_passages"] = int(stored)
            for name, filtered in (("all", None), ("sender", sender)):
                method = numpy_method(engine, args.dimension, filtered)
                first, _ = timed(method, queries[:1])
                results[f"{label}_numpy_{name}_first_call_ms"] = first[0] * 1000
                seconds, answers = timed(method, queries)
                results[f"{label}_numpy_{name}"] = summary(seconds)
                if label == "sqlite":
                    path = sa.make_url(url).database
                    assert path is not None
                    vec_seconds, vec_answers = timed(sqlite_vec_method(path, filtered), queries)
                    agreement = statistics.fmean(
                        len(set(a) & set(b)) / max(1, len(a))
                        for a, b in zip(answers, vec_answers, strict=True)
                    )
                    results[f"agreement_{name}"] = agreement
                    if agreement < 0.9:
                        log(f"the two methods disagree under filter {name}: {agreement:.2f}")
                        return 1
                    results[f"sqlite_vec_{name}"] = summary(vec_seconds)
                    results[f"ratio_{name}"] = (
                        results[f"sqlite_vec_{name}"]["p50_ms"]
                        / results[f"sqlite_numpy_{name}"]["p50_ms"]
                    )
            engine.dispose()
    for key, value in results.items():
        if key != "environment":
            print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
