"""How the similarity floor of the default profile trades what hybrid search finds against
what it makes up: for each floor, recall@10 and MRR@10 per query kind over the labelled set
(as bench/retrieval_quality.py measures them), and how many matches queries of made-up
words get, which a lexical search never matches and no message is about.

    uv run --frozen python bench/similarity_floor.py --data-dir DIR

DIR is a store bench/retrieval_quality.py filled (its --data-dir): the collection imported
and the minilm-int8 generation embedded. Nothing is embedded here but the queries.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path[:0] = [str(BENCH_DIR), str(REPO / "tests")]

import labelled_queries  # noqa: E402
from machine import log  # noqa: E402
from retrieval_quality import (  # noqa: E402
    CALLER,
    DEPTH,
    MINILM_INT8,
    deployment_at,
    measure,
    searching,
    stored_names,
    table,
)

from mailfathom.app.reading.search_emails import SearchRequest  # noqa: E402
from mailfathom.app.shared.mailbox_selection import SelectionInput  # noqa: E402
from mailfathom.bootstrap import Services  # noqa: E402
from mailfathom.domain.embedding import RetrievalMode  # noqa: E402
from mailfathom.domain.embedding_profiles import EmbeddingsConfig  # noqa: E402

FLOORS = (0.0, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
MADE_UP = 40


def made_up_queries(count: int) -> list[str]:
    """Queries of two or three pronounceable nonsense words (seeded: the same every run)."""
    rng = random.Random(30)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"

    def word() -> str:
        return "".join(
            rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(3, 4))
        )

    return [" ".join(word() for _ in range(rng.randint(2, 3))) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpora_default = os.environ.get("MAILFATHOM_CORPORA", str(REPO.parent / "shared" / "corpora"))
    parser.add_argument("--corpora", type=Path, default=Path(corpora_default))
    parser.add_argument("--data-dir", type=Path, required=True)
    args = parser.parse_args()
    corpora = args.corpora.resolve()
    queries = labelled_queries.load()
    by_message_id = dict(
        labelled_queries.message_ids(corpora, labelled_queries.collection_names(corpora))
    )
    base = deployment_at(args.data_dir.resolve())
    nonsense = made_up_queries(MADE_UP)
    results = {}
    made_up: list[str] = []
    for floor in FLOORS:
        profile = dataclasses.replace(MINILM_INT8, min_similarity=floor)
        embeddings = EmbeddingsConfig(profiles=(profile,), active_name=profile.name)
        deployment = dataclasses.replace(base, embeddings=embeddings)
        with Services.open(deployment, migrate_schema=False) as services:
            state = services.query_placement().state()
            if state.value != "available":
                raise SystemExit(f"the store's generation is not filled ({state.value})")
            names = stored_names(services, by_message_id)
            results[f"floor {floor:.2f}"] = measure(
                queries, searching(services, RetrievalMode.HYBRID), names
            )
            search = services.reading().search
            counts = [
                len(
                    search.search(
                        CALLER,
                        SearchRequest(query_text=q, selection=SelectionInput(), result_limit=DEPTH),
                    ).matches
                )
                for q in nonsense
            ]
        matched = sum(1 for c in counts if c)
        made_up.append(
            f"| {floor:.2f} | {matched} of {len(counts)} | {sum(counts) / len(counts):.1f} |"
        )
        log(f"floor {floor:.2f} measured")
    print(table(results))
    print()
    print("| floor | made-up queries with a match | matches per made-up query |")
    print("| ---: | ---: | ---: |")
    print("\n".join(made_up))


if __name__ == "__main__":
    main()
