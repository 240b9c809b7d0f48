"""WordLlama's static token embeddings (256 dimensions), from the `wordllama` package.

`WordLlama.load()` looks for its tokenizer under `tokenizer/` beside its code, while the
wheel ships it under `tokenizers/`, and downloads what it does not find. It is therefore
given the package directory as its cache (where `tokenizers/` is found) with downloads off,
so it reads the two files located and checked here, or fails to load.

A text is the mean of its tokens' vectors; the empty text has no token and so no
direction, and is embedded as a single space is (the smallest text that has one).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mailfathom.adapters.embedding.packaged import Matrix, PackagedModel, PackageFile
from mailfathom.domain.embedding_profiles import PackageModel

_CONFIG = "l2_supercat"
_DIMENSION = 256


class WordLlamaEngine:
    def __init__(self, weights: Path) -> None:
        from wordllama import WordLlama

        # weights is <package>/weights/<file>: the package directory is two levels up.
        self._model = WordLlama.load(
            config=_CONFIG,
            cache_dir=weights.parent.parent,
            dim=_DIMENSION,
            disable_download=True,
        )

    def passages(self, texts: list[str]) -> Matrix:
        given = [text or " " for text in texts]
        return np.asarray(self._model.embed(given, norm=False), dtype=np.float32)

    def queries(self, texts: list[str]) -> Matrix:
        return self.passages(texts)


def _load(weights: Path, others: Sequence[Path]) -> WordLlamaEngine:
    del others  # the tokenizer is found by WordLlama itself beside the weights
    return WordLlamaEngine(weights)


WORDLLAMA = PackagedModel(
    model=PackageModel.WORDLLAMA,
    weights=PackageFile("wordllama", f"wordllama/weights/{_CONFIG}_{_DIMENSION}.safetensors"),
    dimension=_DIMENSION,
    load=_load,
    pinned=(
        (
            PackageFile("wordllama", f"wordllama/tokenizers/{_CONFIG}_tokenizer_config.json"),
            "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
        ),
    ),
)
