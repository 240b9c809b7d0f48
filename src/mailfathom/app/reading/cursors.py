"""Continuation cursors: authenticated, and bound to the selection they were issued for.

A cursor carries where the previous page ended and a digest of the resolved selection and
direction. It is signed by the deployment, so a hand-written or truncated cursor is refused
(52001), and a genuine cursor replayed with other filters is refused too (52002) rather than
silently continuing a different walk. Account names are resolved before the digest is taken,
so a cursor issued for an account's identifier stays valid for its display name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import datetime

from mailfathom.app.shared.cursor_signing import CursorSigner
from mailfathom.app.shared.stored_mail import TimelinePosition
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_CURSOR_CHARACTERS = 512


def selection_digest(parts: Sequence[object], direction: str) -> str:
    canonical = json.dumps([[_plain(p) for p in parts], direction], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def issue(signer: CursorSigner, digest: str, position: TimelinePosition) -> str:
    received = position.received_at.isoformat() if position.received_at else None
    body = json.dumps({"v": 1, "d": digest, "r": received, "s": position.seq})
    return signer.sign(body.encode())


def accept(signer: CursorSigner, token: str, digest: str) -> TimelinePosition:
    """The position a cursor continues from, after checking it was issued here for this
    selection."""
    foreign = Refusal(Code.CURSOR_NOT_ISSUED_HERE, "The cursor was not issued by this server.")
    if len(token) > MAX_CURSOR_CHARACTERS:
        raise foreign
    payload = signer.open(token)
    if payload is None:
        raise foreign
    try:
        body = json.loads(payload)
        received = body["r"]
        seq = body["s"]
        issued_for = body["d"]
        # A JSON true or false is a Python int too (true == 1), and neither version nor
        # position.
        version = body.get("v")
        whole = isinstance(seq, int) and not isinstance(seq, bool)
        if isinstance(version, bool) or version != 1 or not whole:
            raise foreign
        if not isinstance(issued_for, str):
            raise foreign
        position = TimelinePosition(
            datetime.fromisoformat(received) if received is not None else None, seq
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise foreign from exc
    if issued_for != digest:
        raise Refusal(
            Code.CURSOR_FOR_OTHER_FILTERS,
            "The cursor was issued for different filters or another reading direction.",
        )
    return position
