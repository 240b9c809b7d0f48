"""Stored passage vectors, as the search path reads them: how far a generation is filled, and
the messages nearest a query among those a search may return.

Vectors are kept per generation (`ProfileIdentity.generation`): a query is compared only with
the vectors of the generation its own vector was made in, and a generation not yet filled
answers for the mail it has reached only, which the search path says (`degraded`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from mailfathom.app.shared.stored_mail import SummaryFilter


@dataclass(frozen=True, slots=True)
class FillState:
    """How much of the mail a generation should hold it holds: `embedded` of `eligible`
    messages (those not in a junk folder whose content is held), and whether it is `filled`:
    its backfill has once walked every message, and no more than a few messages (those the
    last passes stored) wait past its position. New mail waiting its turn does not unfill a
    generation; a large pass does, until the backfill has reached its end."""

    generation: str
    embedded: int
    eligible: int
    filled: bool

    @property
    def remaining(self) -> int:
        return max(0, self.eligible - self.embedded)


class Nearest(NamedTuple):
    """A message and the similarity of its nearest passage to the query (cosine: higher is
    nearer, at most 1)."""

    seq: int
    score: float


class PendingNearest(Protocol):
    def result(self) -> list[Nearest]:
        """The ranking, once it is done (waits for it)."""
        ...


class FillStates(Protocol):
    """Both calls read only and are synchronous."""

    def fill_state(self, generation: str) -> FillState:
        """The generation's state now, with its counts (two counts over the stored mail:
        for a progress display, not for every search); a generation never started holds
        nothing and is not filled."""
        ...

    def is_filled(self, generation: str) -> bool:
        """`FillState.filled` alone: a row and a bounded count of the newest messages read,
        cheap enough for every search."""
        ...


class NearestPassages(Protocol):
    def nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> list[Nearest]:
        """Up to `window` messages of the generation passing `eligible` (its folders narrowed
        to those visible to tools, one row per message as `MailboxReadView.search` counts
        them), nearest first, each scored by its nearest passage (ties: higher `seq`
        first). Under a filter or scope leaving up to several thousand messages the ranking
        is exact: every passage of each is compared, so a selective filter narrows the
        answer and never empties it of what it holds. Over more, the passages compared are
        those of the messages nearest by one pooled vector each; the scores answered are
        still their nearest passage's (docs/embeddings-storage.md). Reads only."""
        ...
