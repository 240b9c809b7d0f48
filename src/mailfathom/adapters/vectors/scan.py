"""The scan: eligible vectors compared with the query, in numpy.

A generation's vectors are held in memory as they are stored (int8, a scale per row) and
compared a block of rows at a time, each block widened to float32 only for its product with
the query, so that the float copy stays in the processor's cache instead of costing four
times the matrix in memory. A message's score is its nearest passage.

The vectors may be held in several matrices (a process keeps one per account:
`adapters/sql/vector_cache.py`) and a ranking spans those the search names, its messages
ranked as one. Which messages may answer is a mask over each, which the caller computes from
the store's own filters. When they leave at most `EXACT_MESSAGES` messages in all, every
passage of each is compared: a filter that leaves few messages narrows the scan and can
never leave it empty of what it holds, which an approximate index searched first and
filtered after can. Over more messages, each message's pooled vector
(`messages.MessageIndex`) is compared first, one row a message instead of seven for long
mail, and the passages of the `CANDIDATES` nearest messages by it are then compared exactly.
docs/embeddings-storage.md has the measurements behind both numbers and behind choosing
numpy over sqlite-vec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mailfathom.adapters.vectors.messages import MessageIndex

# Rows widened to float32 at once: 1,024 x 384 x 4 octets = 1.5 MiB, which stays in the
# cache. It also keeps each product below the size at which OpenBLAS splits a product over
# threads: on two busy cores 150,000 x 384 took 713 ms in blocks of 4,096 rows and 45 ms in
# blocks of 1,024 (34 ms with one BLAS thread).
BLOCK_ROWS = 1024
# Up to this many eligible messages, every passage of each is compared with the query.
EXACT_MESSAGES = 16_384
# Over more, the passages of this many messages nearest by their pooled vector are
# compared (more when a deeper ranking is asked for: `CANDIDATE_FACTOR` per message).
CANDIDATES = 4096
CANDIDATE_FACTOR = 8

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]
Octets = npt.NDArray[np.int8]


def _empty_ints() -> Ints:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class VectorMatrix:
    """One generation's vectors as one snapshot: row i is passage `vector_ids[i]` of message
    `seqs[i]`, which lies in folder `folder_ids[i]`. Never changed once made: `extended`
    makes the next snapshot, so a search still ranking this one is never disturbed."""

    dimension: int
    vector_ids: Ints = field(default_factory=_empty_ints)
    seqs: Ints = field(default_factory=_empty_ints)
    folder_ids: Ints = field(default_factory=_empty_ints)
    scales: Floats = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    rows: Octets | None = None
    messages: MessageIndex | None = None

    def __post_init__(self) -> None:
        if self.rows is None:
            object.__setattr__(self, "rows", np.zeros((0, self.dimension), dtype=np.int8))
        if self.messages is None:
            object.__setattr__(self, "messages", MessageIndex.empty(self.dimension))

    @property
    def octets(self) -> Octets:
        assert self.rows is not None
        return self.rows

    @property
    def index(self) -> MessageIndex:
        assert self.messages is not None
        return self.messages

    @property
    def highest(self) -> int:
        return int(self.vector_ids[-1]) if self.vector_ids.size else 0

    def __len__(self) -> int:
        return int(self.seqs.size)

    def held_up_to(self, vector_id: int) -> int:
        """How many rows have an id of at most `vector_id` (ids are held in order)."""
        return int(np.searchsorted(self.vector_ids, vector_id, side="right"))

    def extended(
        self,
        vector_ids: Ints,
        seqs: Ints,
        folder_ids: Ints,
        scales: Floats,
        rows: Octets,
    ) -> VectorMatrix:
        """This snapshot and rows read in `vector_id` order, all beyond `highest`."""
        if not seqs.size:
            return self
        octets = np.concatenate([self.octets, rows])
        all_scales = np.concatenate([self.scales, scales])
        all_seqs = np.concatenate([self.seqs, seqs])
        all_folders = np.concatenate([self.folder_ids, folder_ids])
        return VectorMatrix(
            self.dimension,
            np.concatenate([self.vector_ids, vector_ids]),
            all_seqs,
            all_folders,
            all_scales,
            octets,
            self.index.extended(all_seqs, all_folders, all_scales, octets, len(self)),
        )


def unit_query(query: list[float] | tuple[float, ...], dimension: int) -> Floats | None:
    """The query as a unit float32 vector, None when it is not of `dimension` or is zero."""
    vector = np.asarray(query, dtype=np.float32)
    if vector.shape != (dimension,):
        return None
    norm = float(np.linalg.norm(vector))
    if norm == 0.0 or not np.isfinite(norm):
        return None
    return vector / np.float32(norm)


def products(octets: Octets, scales: Floats, query: Floats, rows: Ints | None = None) -> Floats:
    """Cosine similarity of `query` with each of `rows` of a unit-row matrix stored as int8
    and a scale a row (every row when None)."""
    source = octets if rows is None else octets[rows]
    scale = scales if rows is None else scales[rows]
    found = np.empty(source.shape[0], dtype=np.float32)
    for start in range(0, source.shape[0], BLOCK_ROWS):
        block = source[start : start + BLOCK_ROWS].astype(np.float32)
        found[start : start + BLOCK_ROWS] = block @ query
    return found * scale


def scores(matrix: VectorMatrix, query: Floats, rows: Ints | None = None) -> Floats:
    """Cosine similarity of `query` with each of the matrix's `rows` (every row when None)."""
    return products(matrix.octets, matrix.scales, query, rows)


Part = tuple[VectorMatrix, npt.NDArray[np.bool_]]
"""One matrix of a ranking and which of its messages may answer (a mask over its index)."""


class Ranking:
    """The allowed messages of `parts` (several matrices, as one account's each) ranked
    against a query as one; `best` reads the messages off it, each scored by its nearest
    passage, as far down as it is asked. Exact (every passage of every allowed message
    compared) when at most `exact_up_to` messages are allowed over all the parts; otherwise
    the passages compared are those of the messages nearest by their pooled vector over all
    the parts (see module), so splitting a matrix into parts never changes the answer."""

    def __init__(
        self,
        parts: Sequence[Part],
        query: Floats,
        *,
        exact_up_to: int = EXACT_MESSAGES,
        candidates: int = CANDIDATES,
        per_message: int = CANDIDATE_FACTOR,
    ) -> None:
        found = ((matrix, np.flatnonzero(allowed)) for matrix, allowed in parts)
        self._parts = [(matrix, members) for matrix, members in found if members.size]
        # Where each part's allowed messages start in the numbering of all of them.
        self._starts = np.cumsum([0, *(members.size for _, members in self._parts)])
        self._allowed = int(self._starts[-1])
        self._query = query
        self.exact = self._allowed <= exact_up_to
        self._candidates = candidates
        self._per_message = per_message
        self._pooled: Floats | None = None
        # How many messages were compared by their passages, their `seq`s and scores.
        self._scored: tuple[int, Ints, Floats] | None = None

    def best(self, count: int) -> list[tuple[int, float]]:
        """Up to `count` messages, best first (ties: higher `seq` first)."""
        if count <= 0 or self._allowed == 0:
            return []
        seqs, nearest = self._nearest(count)
        if seqs.size > count:
            # Every message scoring at least the count-th best, ties included, then sorted.
            cut = np.partition(-nearest, count - 1)[count - 1]
            kept = -nearest <= cut
            seqs, nearest = seqs[kept], nearest[kept]
        order = np.lexsort((-seqs, -nearest))[:count]
        return [(int(seqs[i]), float(nearest[i])) for i in order]

    def _nearest(self, count: int) -> tuple[Ints, Floats]:
        """Message numbers and their nearest passage's similarity: every allowed message
        when exact, else the pooled ranking's best `candidates` (or `per_message` times
        `count`, if more)."""
        if self.exact:
            if self._scored is None:
                self._scored = self._compared(np.arange(self._allowed))
            return self._scored[1:]
        wanted = min(self._allowed, max(self._candidates, count * self._per_message))
        if self._scored is not None and self._scored[0] >= wanted:
            return self._scored[1:]
        pooled = self._pooled_scores()
        if wanted < pooled.size:
            picked = np.sort(np.argpartition(-pooled, wanted - 1)[:wanted])
        else:
            picked = np.arange(self._allowed)
        self._scored = self._compared(picked)
        return self._scored[1:]

    def _compared(self, picked: Ints) -> tuple[int, Ints, Floats]:
        """The `seq` and score of each of `picked` (numbers of allowed messages, ascending)."""
        bounds = np.searchsorted(picked, self._starts)
        seqs: list[Ints] = []
        nearest: list[Floats] = []
        for number, (matrix, members) in enumerate(self._parts):
            mine = members[picked[bounds[number] : bounds[number + 1]] - self._starts[number]]
            seqs.append(matrix.index.seqs[mine])
            nearest.append(self._passages(matrix, mine))
        return int(picked.size), np.concatenate(seqs), np.concatenate(nearest)

    def _pooled_scores(self) -> Floats:
        """Each allowed message's similarity by its pooled vector, part after part."""
        if self._pooled is None:
            scored = [np.zeros(0, dtype=np.float32)]
            for matrix, members in self._parts:
                index = matrix.index
                whole = members.size == len(index)
                scored.append(
                    products(index.pooled, index.scales, self._query, None if whole else members)
                )
            self._pooled = np.concatenate(scored)
        return self._pooled

    def _passages(self, matrix: VectorMatrix, members: Ints) -> Floats:
        """Each of `members`'s similarity by its nearest passage (numbers in `matrix`)."""
        rows, starts = matrix.index.rows_of(members)
        if not rows.size:
            return np.zeros(0, dtype=np.float32)
        return np.maximum.reduceat(scores(matrix, self._query, rows), starts)
