"""What storing vectors compactly costs in retrieval quality, and how fast the backfill fills.

    uv run --frozen --with wordllama python bench/vector_quality.py [--embedder wordllama]
    uv run --frozen python bench/vector_quality.py --embedder hashed
        [--corpora ../shared/corpora] [--data-dir DIR] [--json FILE]

The collection of the labelled query set is imported and synchronized as
`retrieval_quality.py` does, then embedded by the project's own backfill
(`StoredMailEmbedding.run`: passages, batches, the store), timed: passages/s and messages/s.
The vectors the embedder returned are kept in the order they were stored, so each stored
int8 row has its float32 original beside it. Every query is then answered by an exact scan
(a message scored by its nearest passage) over the same passages stored three ways:

  float32   the vectors as the embedder returned them
  float16   rounded to half precision
  int8      as the store keeps them (int8 and a scale per vector, `adapters/vectors/codec`)
  store     the store's own `nearest` (SqlMailboxReader), which must agree with int8

and scored like the lexical path (recall@10, hit@10, MRR@10 per query kind), which is
measured too for reference.

--passage-characters and --overlap measure other passage sizes and overlaps than the
module's (`domain/passages.py`), on a fresh store each.

Embedders: `wordllama` (its package's 256-dimension static embeddings, loaded from the
package folder with downloads off; not a dependency of the project: run with
`--with wordllama`), or `hashed` (the tests' deterministic hashed bag of words, 64
dimensions: lexical in nature, a check of the plumbing, not of meaning).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO / "tests")]

import labelled_queries  # noqa: E402
import numpy as np  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from machine import log  # noqa: E402
from retrieval_quality import (  # noqa: E402
    Retriever,
    lexical,
    loaded_store,
    measure,
    stored_names,
    table,
)

from fakes.embedder import FakeEmbedder  # noqa: E402
from mailfathom.adapters.sql.reading import SqlMailboxReader  # noqa: E402
from mailfathom.adapters.sql.schema import folders, messages, passage_vectors  # noqa: E402
from mailfathom.adapters.vectors.codec import decode  # noqa: E402
from mailfathom.app.shared.embedding_ports import Embedder  # noqa: E402
from mailfathom.app.shared.stored_mail import SummaryFilter  # noqa: E402
from mailfathom.app.sync.embedding import StoredMailEmbedding  # noqa: E402
from mailfathom.bootstrap import Services  # noqa: E402
from mailfathom.domain import passages  # noqa: E402
from mailfathom.domain.embedding import ProfileIdentity  # noqa: E402

DEPTH = 10


class WordLlamaEmbedder:
    """wordllama's packaged weights as an `Embedder` (unit vectors), for measuring only."""

    def __init__(self) -> None:
        import wordllama
        from wordllama import WordLlama

        folder = Path(wordllama.__file__).parent
        self._model = WordLlama.load(cache_dir=folder, disable_download=True)
        self._identity = ProfileIdentity("wordllama-l2-supercat", wordllama.__version__, 256)

    @property
    def identity(self) -> ProfileIdentity:
        return self._identity

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = np.asarray(self._model.embed(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (vectors / norms).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_passages([text])[0]

    def close(self) -> None:
        """Nothing to release (`OpenEmbedder`)."""


class Recording:
    """Passes calls through and keeps every passage vector returned, in order."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.kept: list[list[float]] = []

    @property
    def identity(self) -> ProfileIdentity:
        return self._embedder.identity

    def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        found = self._embedder.embed_passages(texts)
        self.kept.extend(found)
        return found

    def embed_query(self, text: str) -> list[float]:
        return self._embedder.embed_query(text)


def stored_rows(services: Services) -> tuple[np.ndarray, np.ndarray, dict[int, str]]:
    """(seq per row, int8 rows decoded to float32) in storage order, and seq -> email id."""
    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(
                passage_vectors.c.seq, passage_vectors.c.scale, passage_vectors.c.vector
            ).order_by(passage_vectors.c.vector_id)
        ).all()
        ids = {
            int(s): str(i)
            for s, i in c.execute(sa.select(messages.c.seq, messages.c.stored_email_id))
        }
    seqs = np.asarray([r.seq for r in rows], dtype=np.int64)
    decoded = np.stack([decode(r.scale, bytes(r.vector)) for r in rows])
    return seqs, decoded, ids


def exact(
    matrix: np.ndarray, seqs: np.ndarray, ids: dict[int, str], embedder: Embedder
) -> Retriever:
    def retrieve(text: str) -> list[str]:
        query = np.asarray(embedder.embed_query(text), dtype=np.float32)
        scores = matrix @ (query / np.linalg.norm(query))
        found: list[str] = []
        seen: set[int] = set()
        for row in np.argsort(-scores, kind="stable"):
            seq = int(seqs[row])
            if seq not in seen:
                seen.add(seq)
                found.append(ids[seq])
                if len(found) == DEPTH:
                    break
        return found

    return retrieve


def store_path(services: Services, ids: dict[int, str], embedder: Embedder) -> Retriever:
    reader = SqlMailboxReader(services.engine)
    with services.engine.connect() as c:
        folder_ids = tuple(int(f) for f in c.execute(sa.select(folders.c.folder_id)).scalars())
    selection = SummaryFilter(folder_ids=folder_ids)
    generation = embedder.identity.generation

    def retrieve(text: str) -> list[str]:
        query = embedder.embed_query(text)
        return [ids[n.seq] for n in reader.nearest(generation, query, selection, DEPTH)]

    return retrieve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpora_default = os.environ.get("MAILFATHOM_CORPORA", str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--corpora", type=Path, default=Path(corpora_default))
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--embedder", choices=("wordllama", "hashed"), default="wordllama")
    parser.add_argument("--passage-characters", type=int, help="try another passage size")
    parser.add_argument("--overlap", type=int, help="try another overlap, in characters")
    args = parser.parse_args()
    if args.passage_characters is not None:
        passages.PASSAGE_CHARACTERS = args.passage_characters
    if args.overlap is not None:
        passages.OVERLAP_CHARACTERS = args.overlap
    corpora = args.corpora.resolve()
    queries = labelled_queries.load()
    by_message_id = dict(
        labelled_queries.message_ids(corpora, labelled_queries.collection_names(corpora))
    )
    base: Embedder = WordLlamaEmbedder() if args.embedder == "wordllama" else FakeEmbedder()
    recording = Recording(base)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="vector-quality-") as scratch:
        root = args.data_dir or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        with loaded_store(corpora, root.resolve()) as services:
            names = stored_names(services, by_message_id)
            embedding = StoredMailEmbedding(
                services.passage_store(), recording, clock=lambda: datetime.now(UTC)
            )
            started = time.perf_counter()
            report = embedding.run()
            seconds = time.perf_counter() - started
            fill = {
                "embedder": args.embedder,
                "passage_characters": passages.PASSAGE_CHARACTERS,
                "overlap_characters": passages.OVERLAP_CHARACTERS,
                "messages": report.messages,
                "passages": report.passages,
                "seconds": seconds,
                "passages_per_s": report.passages / seconds if seconds else 0.0,
                "messages_per_s": report.messages / seconds if seconds else 0.0,
            }
            log(f"backfill: {fill}")
            if report.messages == 0:
                raise SystemExit("nothing was embedded: use a fresh --data-dir or another embedder")
            seqs, int8_rows, ids = stored_rows(services)
            float32 = np.asarray(recording.kept, dtype=np.float32)
            if float32.shape != int8_rows.shape:
                raise SystemExit("the stored rows do not line up with the embedder's answers")
            agreement = float(np.min(np.sum(float32 * int8_rows, axis=1)))
            log(f"lowest cosine of a stored int8 row with its original: {agreement:.5f}")
            float16 = float32.astype(np.float16).astype(np.float32)
            paths = {
                "lexical": lexical(services),
                "float32": exact(float32, seqs, ids, recording),
                "float16": exact(float16, seqs, ids, recording),
                "int8": exact(int8_rows, seqs, ids, recording),
                "store": store_path(services, ids, recording),
            }
            scores = {}
            for name, retrieve in paths.items():
                scores[name] = measure(queries, retrieve, names)
    results = {"fill": fill, "lowest_row_cosine": agreement, "scores": scores}
    print(table(scores))
    for name in ("float16", "int8"):
        for kind, figures in scores[name].items():
            base_mrr = scores["float32"][kind]["mrr@10"]
            base_recall = scores["float32"][kind]["recall@10"]
            print(
                f"{name} / float32, {kind}: recall@10 {figures['recall@10'] - base_recall:+.4f}, "
                f"MRR@10 {figures['mrr@10'] - base_mrr:+.4f}"
            )
    print(f"backfill: {fill}")
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
