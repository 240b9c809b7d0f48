"""One request that writes mutation records, as its request identity names it.

A request identity (the caller's `requestId`, under who asked) names one whole request: the
emails it names and every value it asks of them. A call carrying an identity already held on
one of its emails is a retry only when it asks exactly what the call that wrote those records
asked; asking more, less or another value, of these emails or of others besides, is another
request, refused rather than answered with the first one's records or a mix of old and new
ones. Each record keeps a digest of the whole request that wrote it, so a call naming fewer
emails than that request did is told apart as well. An identity is per email: a call naming
none of the emails it was used on is a request of its own.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence

from mailfathom.domain.mutations import MutationRecord, RequestedMutation

AskedOf = tuple[uuid.UUID, RequestedMutation]
"""One value a request asks of one stored email."""


def request_digest(asked: Sequence[AskedOf]) -> str:
    """The whole request as a SHA-256 digest (hex): every email and value it asks, in any
    order (neither a value nor an identifier holds a line break)."""
    lines = sorted(f"{email} {m.kind.value} {m.value}" for email, m in asked)
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def retried(
    held: Sequence[MutationRecord], asked: Sequence[AskedOf], digest: str
) -> list[MutationRecord] | None:
    """The records `held` under the request identity on the emails `asked` names, in the
    order asked, when this same request wrote them; None when another request did. A record
    written before requests were kept whole carries no digest and is judged by its value."""
    by_change = {(r.stored_email_id, r.kind): r for r in held}
    if len(by_change) != len(held) or len(held) != len(asked):
        return None
    if any(r.request_digest not in (digest, None) for r in held):
        return None
    answered: list[MutationRecord] = []
    for email, mutation in asked:
        record = by_change.get((email, mutation.kind))
        if record is None or record.value != mutation.value:
            return None
        answered.append(record)
    return answered
