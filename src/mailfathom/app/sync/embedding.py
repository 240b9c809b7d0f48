"""Embedding stored mail: its messages' passages placed in the active profile's space.

Messages are read in `seq` order from where the generation's walk stands, cut into passages
(`domain.passages`), and embedded a batch of passages at a time, one provider call per batch;
each batch's vectors commit with the position reached, so a walk that is interrupted resumes
after the last batch it recorded. Mail stored after the walk passed is found by the next walk
(it has a higher `seq`); mail whose content arrived later, below the position, by a walk
from the start, which the backfill takes now and then (`app/sync/embedding_backfill.py`).

A provider that fails raises `EmbeddingUnavailable` out of `step` with nothing recorded of
that batch; the caller decides when to try again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
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
    """One batch: messages read, passages embedded, and the last message's `seq` (where the
    next step starts); `messages == 0` when nothing was left after the start."""

    messages: int
    passages: int
    after_seq: int


@dataclass(frozen=True, slots=True)
class EmbedReport:
    messages: int
    passages: int
    resumed_after: int
    state: FillState


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

    def step(self, generation: Generation, after_seq: int) -> Step:
        """Embed the next batch of messages after `after_seq` the generation has not read.
        A message whose body cannot be read now is passed over unrecorded, so that a later
        walk from the start reads it once it has been repaired."""
        found = self._store.unembedded(generation.generation_id, after_seq, self._batch)
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
            self._store.record(generation.generation_id, embedded, last)
        return Step(len(cut), len(texts), last)

    def run(self, progress: Progress | None = None) -> EmbedReport:
        """Embed everything left, from the generation's position on and then from the start
        (mail whose content arrived after the walk passed it), and note the generation
        filled; `progress` is told the fill state after each batch."""
        generation = self.generation()
        resumed = generation.after_seq
        messages = passages = 0
        # Counted once: each batch adds its messages to the count, so that a progress
        # display costs no count over the stored mail per batch.
        before = self.fill_state()
        if progress is not None:
            progress(before)
        for start in (generation.after_seq, 0):
            after = start
            while True:
                step = self.step(generation, after)
                if step.after_seq == after:
                    break
                messages += step.messages
                passages += step.passages
                after = step.after_seq
                if progress is not None:
                    embedded = min(before.embedded + messages, before.eligible)
                    progress(dataclasses.replace(before, embedded=embedded))
            if start == 0:
                break
        self.finish(generation)
        return EmbedReport(messages, passages, resumed, self.fill_state())

    def finish(self, generation: Generation) -> int:
        """Note the generation filled and drop the others (see `PassageStore.finish`)."""
        return self._store.finish(generation.generation_id, self._clock())


def _passages(message: MessageText) -> list[str]:
    if message.plain_text is None:
        return []
    return passages_of(message.subject, message.plain_text)
