"""Whether a stored message's content is held, and the flags its server showed for it."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ContentState(enum.Enum):
    """Whether a message's raw MIME is held locally, and if not, why."""

    STORED = "stored"
    EXCEEDED_SIZE_LIMIT = "exceededSizeLimit"
    AWAITING_HEADROOM = "awaitingStorageHeadroom"


@dataclass(frozen=True, slots=True)
class RemoteFlags:
    """The flags a server showed for one message (RFC 3501 section 2.3.2).

    Keywords are folded to lower case: flag names compare without regard to case.
    """

    seen: bool = False
    flagged: bool = False
    answered: bool = False
    draft: bool = False
    deleted: bool = False
    keywords: frozenset[str] = frozenset()

    @classmethod
    def from_names(cls, names: tuple[str, ...] | list[str]) -> RemoteFlags:
        system = {"\\seen", "\\flagged", "\\answered", "\\draft", "\\deleted", "\\recent"}
        folded = [n.lower() for n in names]
        return cls(
            seen="\\seen" in folded,
            flagged="\\flagged" in folded,
            answered="\\answered" in folded,
            draft="\\draft" in folded,
            deleted="\\deleted" in folded,
            keywords=frozenset(n for n in folded if n not in system and not n.startswith("\\")),
        )
