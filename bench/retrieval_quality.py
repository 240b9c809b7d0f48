"""Retrieval quality on the labelled query set: recall@10, hit@10 and MRR@10 per query kind.

    uv run --frozen python bench/retrieval_quality.py [--corpora ../shared/corpora]
        [--data-dir DIR] [--json FILE]

The collection of `labelled_queries.py` (5,396 messages) is filed into the INBOX of a local
account by the project's own import (`Services.import_mail`, what `mailfathom import` runs:
the linux-mips folder of .eml files at once, each SpamAssassin file as the one-message mbox
it is) and synchronized into a SQLite store, as a person's deployment would hold it. With
--data-dir the store is kept there and a second run only checks that nothing is left to
import; without it, it lives in a temporary folder.

Each retrieval function (`RETRIEVERS`) gets every query's text and answers with the stored
email ids it ranks first, best first. A stored email is traced back to its file through its
Message-ID, which every message of the collection has and no two share. For each query, over
the first 10 answers:

  recall@10  the relevant messages found, over min(relevant messages, 10): a thread of 26
             messages is wholly answered by 10 of them
  hit@10     1 when any relevant message is among them
  MRR@10     1 / the rank of the first relevant message (0 when none is)

averaged per kind and over every query. Two paths ask `search_emails` (the use case, in
process) with the query text as it is, over the whole collection:

  lexical    the deployment as loaded, without an embedding profile
  hybrid     the same store opened again with the default profile (minilm-int8) active,
             after the project's backfill (`StoredMailEmbedding.run`) has filled its
             generation: lexical and nearest-passage rankings fused. The fill takes a quarter
             of an hour or more on two cores; with --data-dir it is kept, and a rerun finds
             the generation filled
  hybrid-pooled  the same, the nearest messages ranked as in a store of 100,000 messages:
             first by each message's pooled vector, then by the passages of the nearest
             221 messages (4,096 of 100,000, `CANDIDATES`); this collection is small enough
             to be ranked exactly otherwise

A search answered in another mode than its path's (hybrid falling back to lexical) stops the
run. A further path is one more entry of `RETRIEVERS`: a function from the open services,
and an exit stack for what it opens, to a retriever.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR)]

import labelled_queries  # noqa: E402
from labelled_queries import Kind, LabelledQuery  # noqa: E402
from machine import log  # noqa: E402

from mailfathom.adapters.config.toml_loader import load_config  # noqa: E402
from mailfathom.adapters.sql.vector_cache import VectorCache  # noqa: E402
from mailfathom.adapters.vectors.scan import CANDIDATES  # noqa: E402
from mailfathom.app.reading.list_emails import TimelineRequest  # noqa: E402
from mailfathom.app.reading.search_emails import SearchRequest  # noqa: E402
from mailfathom.app.shared.mailbox_selection import SelectionInput  # noqa: E402
from mailfathom.app.shared.vector_ports import FillState  # noqa: E402
from mailfathom.bootstrap import Services  # noqa: E402
from mailfathom.domain.access import ALL_PERMISSIONS, Caller  # noqa: E402
from mailfathom.domain.config import DeploymentConfig  # noqa: E402
from mailfathom.domain.embedding import RetrievalMode  # noqa: E402
from mailfathom.domain.embedding_profiles import (  # noqa: E402
    EmbeddingsConfig,
    PackageModel,
    PackageProfile,
)

ACCOUNT = "corpus"
DEPTH = 10
# CANDIDATES's share of 100,000 messages, of the collection's 5,396.
POOLED_CANDIDATES = CANDIDATES * 5_396 // 100_000
CALLER = Caller(ALL_PERMISSIONS, "retrieval-quality")

# Query text in, stored email ids (as text) out, best first.
Retriever = Callable[[str], Sequence[str]]

# The default embedding profile, as docs/embeddings.md declares it.
MINILM_INT8 = PackageProfile(
    "minilm-int8",
    PackageModel.MINILM_INT8,
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)


def searching(services: Services, mode: RetrievalMode) -> Retriever:
    """`search_emails` in process, with the query text as it is, over the whole collection;
    a search answered in another mode than `mode` stops the run rather than be scored."""
    search = services.reading().search

    def retrieve(text: str) -> list[str]:
        request = SearchRequest(query_text=text, selection=SelectionInput(), result_limit=DEPTH)
        result = search.search(CALLER, request)
        if result.retrieval_mode is not mode:
            raise SystemExit(
                f"a search answered {result.retrieval_mode.value} ({result.semantic_search.value})"
                f" where {mode.value} was measured"
            )
        return [str(m.summary.stored_email_id) for m in result.matches]

    return retrieve


def lexical(services: Services) -> Retriever:
    """The deployment as loaded: no embedding profile, lexical search."""
    return searching(services, RetrievalMode.LEXICAL)


def hybrid(
    profile: PackageProfile, vectors: Callable[[], VectorCache] = VectorCache
) -> Callable[[Services, ExitStack], Retriever]:
    """The same store opened again with `profile` as the deployment's active embedding
    profile (the embedder `open_embedder` gives a start), its generation filled by the
    project's backfill (`StoredMailEmbedding.run`; kept in --data-dir, so that a rerun
    finds it filled), then searched as `search_emails` fuses lexical and nearest rankings,
    its vectors held as `vectors` makes them."""

    def open_path(services: Services, stack: ExitStack) -> Retriever:
        embeddings = EmbeddingsConfig(profiles=(profile,), active_name=profile.name)
        deployment = dataclasses.replace(services.config, embeddings=embeddings)
        embedded = stack.enter_context(Services.open(deployment, migrate_schema=False))
        embedded.vectors = vectors()
        fill(embedded, profile.name)
        return searching(embedded, RetrievalMode.HYBRID)

    return open_path


def fill(services: Services, name: str) -> None:
    """The active generation filled, with a progress line now and then."""
    embedding = services.embedding()
    if embedding is None:
        raise SystemExit("no embedding profile is active")
    started = time.perf_counter()
    said = started

    def progress(state: FillState) -> None:
        nonlocal said
        now = time.perf_counter()
        if now - said >= 30:
            said = now
            log(f"{name}: {state.embedded} of {state.eligible} messages embedded")

    report = embedding.run(progress)
    seconds = time.perf_counter() - started
    rate = report.passages / seconds if seconds > 0 else 0.0
    log(
        f"{name}: {report.messages} messages, {report.passages} passages embedded in "
        f"{seconds:.1f} s ({rate:.1f} passages/s); filled: {report.state.filled}"
    )


def pooled() -> VectorCache:
    """Vectors ranked as a store of 100,000 messages ranks them: every message first by its
    pooled vector (none is ranked exactly), and the passages compared those of the same
    share of the collection as `CANDIDATES` are of 100,000 messages."""
    return VectorCache(exact_messages=0, candidates=POOLED_CANDIDATES)


RETRIEVERS: dict[str, Callable[[Services, ExitStack], Retriever]] = {
    "lexical": lambda services, _: lexical(services),
    "hybrid": hybrid(MINILM_INT8),
    "hybrid-pooled": hybrid(MINILM_INT8, pooled),
}

# --------------------------------------------------------------------------- the store


def _config(root: Path) -> Path:
    config = root / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{root / "data"}"\n\n[[Accounts]]\nId = "{ACCOUNT}"\n'
        'DisplayName = "Corpus"\nKind = "local"\nAddresses = ["owner@example.org"]\n\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nAlias = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    return config


def import_collection(services: Services, corpora: Path) -> None:
    """The collection filed into the local account's INBOX (each message once)."""
    started = time.perf_counter()
    added = held = 0
    for folder in labelled_queries.COLLECTION:
        source = corpora / folder
        if any(p.suffix == ".eml" for p in source.iterdir()):
            sources = [source]
        else:
            sources = sorted(p for p in source.iterdir() if p.is_file())
        for path in sources:
            count = services.import_mail(ACCOUNT, "INBOX", path)
            added += count.added
            held += count.already_held
    log(f"import: {added} added, {held} already held, {time.perf_counter() - started:.1f} s")


def deployment_at(root: Path) -> DeploymentConfig:
    """The deployment of one local account whose store lives under `root`."""
    return load_config(_config(root))


@contextmanager
def loaded_store(corpora: Path, root: Path) -> Iterator[Services]:
    """The collection imported into the local account's INBOX and synchronized."""
    deployment = deployment_at(root)
    with Services.open(deployment) as services:
        import_collection(services, corpora)
        started = time.perf_counter()
        services.account_synchronizer().run_once(deployment.accounts[0])
        log(f"synchronization: {time.perf_counter() - started:.1f} s")
        yield services


def stored_names(services: Services, by_message_id: dict[str, str]) -> dict[str, str]:
    """Each stored email id to the file it came from, read through list_emails."""
    timeline = services.reading().timeline
    found: dict[str, str] = {}
    cursor = None
    while True:
        request = TimelineRequest(selection=SelectionInput(), page_size=100, cursor=cursor)
        page = timeline.read(CALLER, request)
        for email in page.emails:
            name = by_message_id.get(email.message_id or "")
            if name is not None:
                found[str(email.stored_email_id)] = name
        cursor = page.next_cursor
        if cursor is None:
            return found


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True, slots=True)
class Score:
    recall: float
    hit: float
    reciprocal_rank: float


def score(query: LabelledQuery, ranked_names: Sequence[str]) -> Score:
    relevant = set(query.relevant)
    first = list(ranked_names[:DEPTH])
    found = [name in relevant for name in first]
    rank = found.index(True) + 1 if any(found) else None
    return Score(
        recall=sum(found) / min(len(relevant), DEPTH),
        hit=1.0 if rank is not None else 0.0,
        reciprocal_rank=0.0 if rank is None else 1.0 / rank,
    )


def measure(
    queries: Sequence[LabelledQuery], retrieve: Retriever, names: dict[str, str]
) -> dict[str, dict[str, float]]:
    """Mean scores per kind and over every query ("all")."""
    scored: dict[str, list[Score]] = {}
    for query in queries:
        ranked = [names.get(stored_id, "") for stored_id in retrieve(query.text)]
        result = score(query, ranked)
        scored.setdefault(query.kind.value, []).append(result)
        scored.setdefault("all", []).append(result)
    order = [k.value for k in Kind if k.value in scored] + ["all"]
    return {
        kind: {
            "queries": len(scored[kind]),
            "recall@10": sum(s.recall for s in scored[kind]) / len(scored[kind]),
            "hit@10": sum(s.hit for s in scored[kind]) / len(scored[kind]),
            "mrr@10": sum(s.reciprocal_rank for s in scored[kind]) / len(scored[kind]),
        }
        for kind in order
    }


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    lines = [
        "| path | kind | queries | recall@10 | hit@10 | MRR@10 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for path, kinds in results.items():
        for kind, s in kinds.items():
            lines.append(
                f"| {path} | {kind} | {int(s['queries'])} | {s['recall@10']:.3f} | "
                f"{s['hit@10']:.3f} | {s['mrr@10']:.3f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpora_default = os.environ.get("MAILFATHOM_CORPORA", str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--corpora", type=Path, default=Path(corpora_default))
    parser.add_argument("--data-dir", type=Path, help="keep the store here (reused by a rerun)")
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    parser.add_argument("--path", action="append", choices=sorted(RETRIEVERS), help="default: all")
    args = parser.parse_args()
    corpora = args.corpora.resolve()
    queries = labelled_queries.load()
    by_message_id = dict(
        labelled_queries.message_ids(corpora, labelled_queries.collection_names(corpora))
    )
    with tempfile.TemporaryDirectory(prefix="retrieval-quality-") as scratch:
        root = args.data_dir or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        with loaded_store(corpora, root.resolve()) as services:
            names = stored_names(services, by_message_id)
            log(f"{len(names)} stored emails traced to their files")
            if len(names) != len(by_message_id):
                raise SystemExit("not every message of the collection is in the store")
            results = {}
            for path in args.path or list(RETRIEVERS):
                with ExitStack() as stack:
                    retrieve = RETRIEVERS[path](services, stack)
                    started = time.perf_counter()
                    results[path] = measure(queries, retrieve, names)
                    seconds = time.perf_counter() - started
                    log(f"{path}: {len(queries)} queries in {seconds:.1f} s")
    print(table(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
