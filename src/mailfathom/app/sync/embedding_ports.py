"""The stored passages and vectors, as the embedding backfill writes them.

Every method is synchronous and thread-safe (each opens its own transaction), and none
reaches a provider: vectors are made by the caller through `Embedder` and only handed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mailfathom.app.shared.vector_ports import FillStates
from mailfathom.domain.embedding import ProfileIdentity


@dataclass(frozen=True, slots=True)
class Generation:
    """One embedding space as the store keeps it: its row, how far its backfill has walked
    each account's messages (`positions`: every account, 0 for one not walked yet), and
    whether a walk of every message has once finished."""

    generation_id: int
    identity: ProfileIdentity
    positions: Mapping[str, int]
    filled: bool


@dataclass(frozen=True, slots=True)
class MessageText:
    """A message to embed: its account, its subject and plain body (None: the body could not
    be read now, as when its stored copy is damaged and waits for repair)."""

    account_id: str
    seq: int
    subject: str | None
    plain_text: str | None


# One message's account, `seq` and vectors, in passage order (none for a message with no
# passage).
EmbeddedMessage = tuple[str, int, Sequence[Sequence[float]]]


class PassageStore(FillStates, Protocol):
    def open_generation(self, identity: ProfileIdentity, at: datetime) -> Generation:
        """The generation of `identity`, created (not filled, every position 0) when the
        store has none, with the positions of every account as they stand; idempotent, and
        safe against another process creating it at once."""
        ...

    def unembedded(
        self, generation_id: int, account_id: str, after_seq: int, limit: int
    ) -> list[MessageText]:
        """Up to `limit` messages of `account_id` after `after_seq`, in `seq` order, that
        the generation has not read, that lie in no junk-role folder and whose content is
        held; with their texts. Junk is never embedded, and mail whose content is not held
        (too large, or waiting for room) is not offered until its content arrives."""
        ...

    def record(
        self,
        generation_id: int,
        embedded: Sequence[EmbeddedMessage],
        account_id: str,
        after_seq: int,
    ) -> None:
        """Store the messages' vectors and note them read, in one transaction, with the
        position of `account_id` moved to `after_seq` when that is further. A message
        removed meanwhile, or read already, is skipped, so a batch recorded twice writes
        nothing twice."""
        ...

    def finish(self, generation_id: int, at: datetime) -> int:
        """Note the generation filled (once) and drop every other generation's vectors: a
        profile changed back later starts over. Answers how many generations were dropped."""
        ...
