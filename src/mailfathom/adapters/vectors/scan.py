"""The exact scan: every eligible passage vector compared with the query, in numpy.

A generation's vectors are held in memory as they are stored (int8, a scale per row) and
compared a block of rows at a time, each block widened to float32 only for its product with
the query, so that the float copy stays in the processor's cache instead of costing four
times the matrix in memory. A message's score is its nearest passage. Which rows may answer
is a mask the caller computes from the store's own filters, so a filter that leaves few
messages narrows the scan and can never leave it empty of what it holds, which an
approximate index searched first and filtered after can. docs/embeddings-storage.md has the
measurements that chose this over sqlite-vec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mailfathom.domain.passages import MAX_PASSAGES

# Rows widened to float32 at once: 1,024 x 384 x 4 octets = 1.5 MiB, which stays in the
# cache. It also keeps each product below the size at which OpenBLAS splits a product over
# threads: on two busy cores 150,000 x 384 took 713 ms in blocks of 4,096 rows and 45 ms in
# blocks of 1,024 (34 ms with one BLAS thread).
BLOCK_ROWS = 1024

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]


@dataclass
class VectorMatrix:
    """One generation's vectors: row i is passage `vector_ids[i]` of message `seqs[i]`,
    which lies in folder `folder_ids[i]`."""

    dimension: int
    vector_ids: Ints = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    seqs: Ints = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    folder_ids: Ints = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    scales: Floats = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    rows: npt.NDArray[np.int8] = field(init=False)

    def __post_init__(self) -> None:
        self.rows = np.zeros((0, self.dimension), dtype=np.int8)

    @property
    def highest(self) -> int:
        return int(self.vector_ids[-1]) if self.vector_ids.size else 0

    def __len__(self) -> int:
        return int(self.seqs.size)

    def held_up_to(self, vector_id: int) -> int:
        """How many rows have an id of at most `vector_id` (ids are held in order)."""
        return int(np.searchsorted(self.vector_ids, vector_id, side="right"))

    def extend(
        self,
        vector_ids: Ints,
        seqs: Ints,
        folder_ids: Ints,
        scales: Floats,
        rows: npt.NDArray[np.int8],
    ) -> None:
        """Append rows read in `vector_id` order, all beyond `highest`."""
        self.vector_ids = np.concatenate([self.vector_ids, vector_ids])
        self.seqs = np.concatenate([self.seqs, seqs])
        self.folder_ids = np.concatenate([self.folder_ids, folder_ids])
        self.scales = np.concatenate([self.scales, scales])
        self.rows = np.concatenate([self.rows, rows])


def unit_query(query: list[float] | tuple[float, ...], dimension: int) -> Floats | None:
    """The query as a unit float32 vector, None when it is not of `dimension` or is zero."""
    vector = np.asarray(query, dtype=np.float32)
    if vector.shape != (dimension,):
        return None
    norm = float(np.linalg.norm(vector))
    if norm == 0.0 or not np.isfinite(norm):
        return None
    return vector / np.float32(norm)


def scores(matrix: VectorMatrix, query: Floats, rows: Ints | None = None) -> Floats:
    """Cosine similarity of `query` with each of `rows` (every row when None)."""
    source = matrix.rows if rows is None else matrix.rows[rows]
    scale = matrix.scales if rows is None else matrix.scales[rows]
    found = np.empty(source.shape[0], dtype=np.float32)
    for start in range(0, source.shape[0], BLOCK_ROWS):
        block = source[start : start + BLOCK_ROWS].astype(np.float32)
        found[start : start + BLOCK_ROWS] = block @ query
    return found * scale


class Ranking:
    """The `allowed` rows scored once against a query; `best` reads the messages off it,
    each scored by its nearest passage, as far down as it is asked."""

    def __init__(self, matrix: VectorMatrix, query: Floats, allowed: npt.NDArray[np.bool_]) -> None:
        self._candidates = np.flatnonzero(allowed)
        whole = self._candidates.size == len(matrix)
        self._seqs = matrix.seqs[self._candidates]
        self._similarity = (
            scores(matrix, query, None if whole else self._candidates)
            if self._candidates.size
            else np.zeros(0, dtype=np.float32)
        )

    def best(self, count: int) -> list[tuple[int, float]]:
        """Up to `count` messages, best first (ties: higher `seq` first)."""
        size = self._candidates.size
        if count <= 0 or size == 0:
            return []
        # A message has at most MAX_PASSAGES rows, so this many best rows hold `count`
        # messages whenever the allowed rows do.
        keep = min(size, count * MAX_PASSAGES)
        if keep < size:
            rows = np.argpartition(-self._similarity, keep - 1)[:keep]
        else:
            rows = np.arange(size)
        seqs = self._seqs[rows]
        similarity = self._similarity[rows]
        found: list[tuple[int, float]] = []
        seen: set[int] = set()
        for position in np.lexsort((-seqs, -similarity)):
            seq = int(seqs[position])
            if seq in seen:
                continue
            seen.add(seq)
            found.append((seq, float(similarity[position])))
            if len(found) == count:
                break
        return found
