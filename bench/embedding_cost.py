"""What the embedding worker costs a synchronization pass running beside it.

    uv run --frozen [--with wordllama] python bench/embedding_cost.py
        [--embedder hashed|wordllama|minilm-int8] [--pairs 5] [--idle 0.5]
        [--sample N] [--no-fill-wait] [--corpora ../shared/corpora]

The collection of the labelled query set (5,396 messages) is filed once into a local
account's Maildir (`retrieval_quality.import_collection`); each run copies that deployment
and synchronizes it into its fresh store (`run_once`, timed: wall, and the CPU of the whole
process meanwhile, the worker's included), either
alone (off) or with the deployment's embedding worker (`EmbeddingBackfill.run_forever`, the
thread `serve` starts) embedding what the pass commits as it commits it (on). Runs are
interleaved in pairs, off then on; the ratio of the median pass times (on / off) is printed,
with how many messages the worker embedded while the pass ran, and how long it took to
embed every one (unless --no-fill-wait: a transformer profile takes hours to fill it); then
passages/s of `mfctl mailbox embed` (`StoredMailEmbedding.run`) at full speed on the same
store, or with --sample N on a store of the collection's first N messages (half from each of
its two folders). `minilm-int8` is the default package profile (its installed weights, checked
as a start checks them). The load average is recorded beside every figure: the machine's two
cores are shared.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO / "tests")]

import labelled_queries  # noqa: E402
from machine import log  # noqa: E402
from retrieval_quality import ACCOUNT, deployment_at, import_collection  # noqa: E402
from vector_quality import WordLlamaEmbedder  # noqa: E402

from fakes.embedder import FakeEmbedder  # noqa: E402
from mailfathom.adapters.embedding import OpenEmbedder, open_embedder  # noqa: E402
from mailfathom.adapters.embedding.minilm_model import MINILM_INT8  # noqa: E402
from mailfathom.adapters.embedding.packaged import sha256_of  # noqa: E402
from mailfathom.app.sync.embedding import StoredMailEmbedding  # noqa: E402
from mailfathom.app.sync.embedding_backfill import EmbeddingBackfill  # noqa: E402
from mailfathom.bootstrap import Services  # noqa: E402
from mailfathom.domain.embedding_profiles import PackageProfile  # noqa: E402


def minilm() -> OpenEmbedder:
    """The default package profile, as a deployment opens it."""
    weights = importlib.metadata.distribution(MINILM_INT8.weights.distribution).locate_file(
        MINILM_INT8.weights.path
    )
    profile = PackageProfile("bench", MINILM_INT8.model, sha256_of(Path(str(weights))))
    return open_embedder(profile)


def opened(name: str) -> OpenEmbedder:
    if name == "wordllama":
        return WordLlamaEmbedder()
    if name == "minilm-int8":
        return minilm()
    return FakeEmbedder()


def import_sample(services: Services, corpora: Path, count: int) -> None:
    """The first `count` messages of the collection, half from each of its folders."""
    for number, folder in enumerate(labelled_queries.COLLECTION):
        share = count // 2 if number == 0 else count - count // 2
        for path in sorted(p for p in (corpora / folder).iterdir() if p.is_file())[:share]:
            services.import_mail(ACCOUNT, "INBOX", path)


def one_pass(
    template: Path, work: Path, embedder: OpenEmbedder | None, idle: float, wait: bool
) -> dict[str, Any]:
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    deployment = deployment_at(work)
    with Services.open(deployment) as services:
        services.embedder = embedder
        stop = threading.Event()
        worker = None
        fill = None
        if embedder is not None:
            embedding = services.embedding()
            assert embedding is not None
            # It looks for new mail more often than `serve`'s worker (every 5 s), as that one
            # does during a pass longer than these: busy for the whole pass.
            backfill = EmbeddingBackfill(
                embedding, idle_seconds=idle, activity=services.pass_activity
            )
            worker = threading.Thread(target=backfill.run_forever, args=(stop,), daemon=True)
            worker.start()
            fill = services.fill_states()
        cpu, started = time.process_time(), time.perf_counter()
        services.account_synchronizer().run_once(deployment.accounts[0])
        result: dict[str, Any] = {
            "pass_s": time.perf_counter() - started,
            "process_cpu_s": time.process_time() - cpu,
            "loadavg": os.getloadavg()[0],
        }
        if worker is not None and fill is not None and embedder is not None:
            generation = embedder.identity.generation
            result["embedded_during_pass"] = fill.fill_state(generation).embedded
            if wait:
                waited = time.perf_counter()
                state = fill.fill_state(generation)
                while state.remaining:
                    time.sleep(0.5)
                    state = fill.fill_state(generation)
                result["worker_fill_s"] = time.perf_counter() - started
                result["after_pass_s"] = time.perf_counter() - waited
                result["embedded"] = state.embedded
            stop.set()
            worker.join(timeout=60)
        # The embedder serves every run: the services must not close it with themselves.
        services.embedder = None
    return result


def full_speed(
    template: Path, work: Path, embedder: OpenEmbedder, sample: tuple[Path, int] | None
) -> dict[str, Any]:
    """`mfctl mailbox embed` on a synchronized copy (or on a store of a sample of the
    collection): passages/s at full speed."""
    shutil.rmtree(work, ignore_errors=True)
    if sample is None:
        shutil.copytree(template, work)
    else:
        work.mkdir()
    deployment = deployment_at(work)
    with Services.open(deployment) as services:
        if sample is not None:
            import_sample(services, *sample)
        services.account_synchronizer().run_once(deployment.accounts[0])
        embedding = StoredMailEmbedding(
            services.passage_store(), embedder, clock=lambda: datetime.now(UTC)
        )
        started = time.perf_counter()
        report = embedding.run()
        seconds = time.perf_counter() - started
    return {
        "messages": report.messages,
        "passages": report.passages,
        "seconds": seconds,
        "passages_per_s": report.passages / seconds,
        "messages_per_s": report.messages / seconds,
        "loadavg": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpora_default = os.environ.get("MAILFATHOM_CORPORA", str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--corpora", type=Path, default=Path(corpora_default))
    parser.add_argument(
        "--embedder", choices=("wordllama", "hashed", "minilm-int8"), default="hashed"
    )
    parser.add_argument("--sample", type=int, help="full speed on this many messages only")
    parser.add_argument("--no-fill-wait", action="store_true")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=0.5, help="the worker's rest when idle")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    embedder = opened(args.embedder)
    with tempfile.TemporaryDirectory(prefix="embedding-cost-") as scratch:
        template = Path(scratch) / "template"
        template.mkdir()
        with Services.open(deployment_at(template)) as services:
            import_collection(services, args.corpora.resolve())
        work = Path(scratch) / "work"
        runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
        for pair in range(args.pairs):
            for label, used in (("off", None), ("on", embedder)):
                result = one_pass(template, work, used, args.idle, not args.no_fill_wait)
                runs[label].append(result)
                log(f"pair {pair + 1} {label}: {result}")
        sample = None if args.sample is None else (args.corpora.resolve(), args.sample)
        fastest = full_speed(template, work, embedder, sample)
        log(f"full speed: {fastest}")
    off = statistics.median(r["pass_s"] for r in runs["off"])
    on = statistics.median(r["pass_s"] for r in runs["on"])
    off_cpu = statistics.median(r["process_cpu_s"] for r in runs["off"])
    on_cpu = statistics.median(r["process_cpu_s"] for r in runs["on"])
    summary = {
        "embedder": args.embedder,
        "pass_off_runs_s": sorted(r["pass_s"] for r in runs["off"]),
        "pass_on_runs_s": sorted(r["pass_s"] for r in runs["on"]),
        "pass_off_s": off,
        "pass_on_s": on,
        "ratio_wall": on / off,
        "process_cpu_off_s": off_cpu,
        "process_cpu_on_s": on_cpu,
        "ratio_cpu": on_cpu / off_cpu,
        "worker_fill_s": (
            None if args.no_fill_wait else statistics.median(r["worker_fill_s"] for r in runs["on"])
        ),
        "embedded_during_pass": [r["embedded_during_pass"] for r in runs["on"]],
        "loadavg_off": [r["loadavg"] for r in runs["off"]],
        "loadavg_on": [r["loadavg"] for r in runs["on"]],
        "full_speed": fastest,
        "runs": runs,
    }
    for key, value in summary.items():
        if key != "runs":
            print(f"{key}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
