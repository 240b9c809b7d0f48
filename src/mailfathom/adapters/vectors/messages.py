"""One vector a message beside its passages: what a search over many messages compares first.

A message's pooled vector is the normalized mean of its passage vectors, stored as the
passages are (int8 and a scale). Its product with a query is the cosine with the direction
the message's passages share, which is the passage's own for a message of one passage.
Measured against the elementwise maximum of the passages (docs/embeddings-storage.md), the
mean ranked more of the exact ranking's best messages among its best with the default
profile's model; the candidates it picks are then compared passage by passage, so it only
chooses which messages are looked at closely, never their score.

The index is derived from the passage matrix in memory, never stored: it follows the
passages through every change the matrix follows (new mail embedded, messages removed, a
new generation) without a second record to keep in step. It also groups each message's
passage rows, so that the passages of a set of messages are gathered without a pass over
every row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float32]
Octets = npt.NDArray[np.int8]

# Messages pooled at once: at most 8 passages each, so at most 16,384 rows of float32
# (24 MiB at 384 dimensions).
_POOL_MESSAGES = 2048


@dataclass(frozen=True)
class MessageIndex:
    """Message i is `seqs[i]` in folder `folder_ids[i]`, its pooled vector `pooled[i]` (scale
    `scales[i]`), its passages the matrix rows `order[starts[i] : starts[i] + counts[i]]`."""

    seqs: Ints
    folder_ids: Ints
    pooled: Octets
    scales: Floats
    order: Ints
    starts: Ints
    counts: Ints

    @classmethod
    def empty(cls, dimension: int) -> MessageIndex:
        none = np.zeros(0, dtype=np.int64)
        return cls(
            none,
            none,
            np.zeros((0, dimension), dtype=np.int8),
            np.zeros(0, dtype=np.float32),
            none,
            none,
            none,
        )

    def __len__(self) -> int:
        return int(self.seqs.size)

    def rows_of(self, members: Ints) -> tuple[Ints, Ints]:
        """The passage rows of messages `members` (numbers in this index), grouped by
        message in the order given, and where each message's group starts."""
        counts = self.counts[members]
        offsets = np.cumsum(counts) - counts
        total = int(counts.sum())
        rows = self.order[np.repeat(self.starts[members] - offsets, counts) + np.arange(total)]
        return rows, offsets

    def extended(
        self, seqs: Ints, folder_ids: Ints, scales: Floats, octets: Octets, before: int
    ) -> MessageIndex:
        """The index of the matrix whose rows are given whole, this one covering its first
        `before`. New rows of messages already indexed (their passages were stored in one
        transaction, so only a snapshot that saw part of a commit brings them) make the
        whole index again; new messages are appended."""
        added = seqs[before:]
        if not added.size:
            return self
        found, inverse, counts = np.unique(added, return_inverse=True, return_counts=True)
        if self.seqs.size and (
            found[0] <= int(self.seqs.max()) and bool(np.isin(found, self.seqs).any())
        ):
            return MessageIndex.empty(octets.shape[1]).extended(seqs, folder_ids, scales, octets, 0)
        grouped = before + np.argsort(inverse, kind="stable").astype(np.int64)
        counts = counts.astype(np.int64)
        starts = np.cumsum(counts) - counts
        pooled, pooled_scales = _pooled(octets, scales, grouped, starts, counts)
        return MessageIndex(
            np.concatenate([self.seqs, found.astype(np.int64)]),
            np.concatenate([self.folder_ids, folder_ids[grouped[starts]]]),
            np.concatenate([self.pooled, pooled]),
            np.concatenate([self.scales, pooled_scales]),
            np.concatenate([self.order, grouped]),
            np.concatenate([self.starts, self.order.size + starts]),
            np.concatenate([self.counts, counts]),
        )


def _pooled(
    octets: Octets, scales: Floats, grouped: Ints, starts: Ints, counts: Ints
) -> tuple[Octets, Floats]:
    """Each group's normalized mean as int8 and a scale (a zero mean keeps scale 0)."""
    messages = counts.size
    pooled = np.zeros((messages, octets.shape[1]), dtype=np.int8)
    pooled_scales = np.zeros(messages, dtype=np.float32)
    for first in range(0, messages, _POOL_MESSAGES):
        last = min(messages, first + _POOL_MESSAGES)
        low, high = int(starts[first]), int(starts[last - 1] + counts[last - 1])
        taken = grouped[low:high]
        block = octets[taken].astype(np.float32) * scales[taken, None]
        sums = np.add.reduceat(block, starts[first:last] - low, axis=0)
        largest = np.max(np.abs(sums), axis=1)
        norms = np.linalg.norm(sums, axis=1)
        usable = (largest > 0) & np.isfinite(largest) & np.isfinite(norms)
        step = np.where(usable, largest, 1.0).astype(np.float32)
        quantized = np.clip(np.rint(sums * (127.0 / step)[:, None]), -127, 127)
        pooled[first:last] = np.where(usable[:, None], quantized, 0).astype(np.int8)
        pooled_scales[first:last] = np.where(
            usable, largest / np.where(usable, norms, 1.0) / 127.0, 0.0
        )
    return pooled, pooled_scales
