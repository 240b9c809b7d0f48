"""Embedding stored mail: its messages' passages placed in the active profile's space.

Each account's messages are read in `seq` order from where the generation's walk of that
account stands, cut into passages (`domain.passages`), and embedded a batch of passages at a
time, one provider call per batch; each batch's vectors commit with the account's position
reached, so a walk that is interrupted resumes after the last batch it recorded. A walk gives
the accounts a batch each in turn (`Walk`), so one account's backlog does not hold another's
new mail back. Mail stored after the walk passed is found by the next walk (it has a higher
`seq`); mail whose content arrived later, below the position, by a walk from the start,
which the backfill takes now and then (`app/sync/embedding_backfill.py`).

A provider that fails raises `EmbeddingUnavailable` out of `step` with nothing recorded of
that batch; the caller decides when to try again.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from mailfathom.app.shared.embedding_ports import Embedder, EmbeddingUnavailable
from mailfathom.app.shared.vector_ports import FillState
from mailfathom.app.sync.embedding_ports import (
    EmbeddedMessage,
    Generation,
    MessageText,
    PassageStore,
)
from mailfathom.domain.embedding import EmbeddingFailure
from mailfathom.domain.passages import MAX_PASSAGES, passages_of

# Passages sent to the provider in one call. A transformer embeds a batch in one pass, and an
# endpoint answers one request per batch: larger batches cost fewer round trips, smaller ones
# lose less work when the process stops and keep the backfill's pauses short.
PASSAGE_BATCH = 64


@dataclass(frozen=True, slots=True)
class Step:
    """One batch of one account: messages read, passages embedded, and the last message's
    `seq` (where the account's next step starts); unchanged when nothing was left after the
    start."""

    messages: int
    passages: int
    after_seq: int


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """A run: messages and passages embedded, how many messages the generation held when it
    began (`resumed_with`: 0 for a generation started afresh), and the state it left."""

    messages: int
    passages: int
    resumed_with: int
    state: FillState


class Walk:
    """A walk of every account's messages from given positions. The accounts take turns, a
    batch each; an account leaves the walk once nothing is left past its position, and the
    walk is over when none is left."""

    def __init__(self, positions: Mapping[str, int]) -> None:
        self._after = dict(positions)
        self._turns = deque(sorted(positions))

    def turn(self) -> tuple[str, int] | None:
        """The account whose turn it is and its position, or None once the walk is over."""
        if not self._turns:
            return None
        account_id = self._turns[0]
        return account_id, self._after[account_id]

    def went(self, account_id: str, after_seq: int) -> None:
        """The account whose turn it was reached `after_seq`; a step that moved nothing ends
        its walk."""
        if self._turns.popleft() != account_id:
            raise ValueError("not the account whose turn it was")
        if after_seq != self._after[account_id]:
            self._after[account_id] = after_seq
            self._turns.append(account_id)


Progress = Callable[[FillState], None]


class StoredMailEmbedding:
    def __init__(
        self,
        store: PassageStore,
        embedder: Embedder,
        *,
        clock: Callable[[], datetime],
        batch_passages: int = PASSAGE_BATCH,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._clock = clock
        self._batch = max(batch_passages, MAX_PASSAGES)

    def generation(self) -> Generation:
        """The active profile's generation, created on first use."""
        return self._store.open_generation(self._embedder.identity, self._clock())

    def fill_state(self) -> FillState:
        return self._store.fill_state(self._embedder.identity.generation)

    def step(self, generation: Generation, account_id: str, after_seq: int) -> Step:
        """Embed the next batch of messages of `account_id` after `after_seq` the generation
        has not read. A message whose body cannot be read now is passed over unrecorded, so
        that a later walk from the start reads it once it has been repaired."""
        found = self._store.unembedded(generation.generation_id, account_id, after_seq, self._batch)
        texts: list[str] = []
        cut: list[tuple[str, int, int]] = []
        last = after_seq
        for message in found:
            passages = _passages(message)
            if cut and len(texts) + len(passages) > self._batch:
                break
            last = message.seq
            if message.plain_text is None:
                continue
            cut.append((message.account_id, message.seq, len(passages)))
            texts.extend(passages)
        vectors = self._embedder.embed_passages(texts) if texts else []
        if len(vectors) != len(texts):
            raise EmbeddingUnavailable(EmbeddingFailure.MALFORMED)
        dimension = generation.identity.dimension
        if any(len(vector) != dimension for vector in vectors):
            raise EmbeddingUnavailable(EmbeddingFailure.MISMATCH)
        embedded: list[EmbeddedMessage] = []
        at = 0
        for account_id, seq, count in cut:
            embedded.append((account_id, seq, vectors[at : at + count]))
            at += count
        if found:
            self._store.record(generation.generation_id, embedded, account_id, last)
        return Step(len(cut), len(texts), last)

    def run(self, progress: Progress | None = None) -> EmbedReport:
        """Embed everything left, from the generation's position on and then from the start
        (mail whose content arrived after the walk passed it), and note the generation
        filled; `progress` is told the fill state after each batch."""
        generation = self.generation()
        messages = passages = 0
        # Counted once: each batch adds its messages to the count, so that a progress
        # display costs no count over the stored mail per batch.
        before = self.fill_state()
        if progress is not None:
            progress(before)
        start = dict.fromkeys(generation.positions, 0)
        for walk in (Walk(generation.positions), Walk(start)):
            while (turn := walk.turn()) is not None:
                account_id, after = turn
                step = self.step(generation, account_id, after)
                walk.went(account_id, step.after_seq)
                if step.after_seq == after:
                    continue
                messages += step.messages
                passages += step.passages
                if progress is not None:
                    embedded = min(before.embedded + messages, before.eligible)
                    progress(dataclasses.replace(before, embedded=embedded))
        self.finish(generation)
        return EmbedReport(messages, passages, before.embedded, self.fill_state())

    def finish(self, generation: Generation) -> int:
        """Note the generation filled and drop the others (see `PassageStore.finish`)."""
        return self._store.finish(generation.generation_id, self._clock())


def _passages(message: MessageText) -> list[str]:
    if message.plain_text is None:
        return []
    return passages_of(message.subject, message.plain_text)
