"""The timeline listings read: received time, newest first or oldest first, then `seq`.

Rows with no received time sort as the oldest; a continuation position names the last row
read, and what is left of the timeline after it is one or two stretches, each read with an
index range of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import messages
from mailfathom.app.shared.stored_mail import TimelinePosition


@dataclass(frozen=True, slots=True)
class Stretch:
    """Part of the timeline: the dated rows (ordered by received time, then `seq`) or the
    undated ones (by `seq`), which sort as the oldest."""

    condition: sa.ColumnElement[bool]
    dated: bool


def stretches(newest_first: bool, after: TimelinePosition | None) -> list[Stretch]:
    """What is left of the timeline after `after`, in reading order."""
    received, seq = messages.c.received_at, messages.c.seq
    dated: sa.ColumnElement[bool] | None = received.is_not(None)
    undated: sa.ColumnElement[bool] | None = received.is_(None)
    if after is not None and after.received_at is None:
        undated = sa.and_(received.is_(None), seq < after.seq if newest_first else seq > after.seq)
        dated = None if newest_first else dated
    elif after is not None:
        position = sa.tuple_(received, seq)
        mark = (after.received_at, after.seq)
        dated = position < mark if newest_first else position > mark
        undated = undated if newest_first else None
    ordered = [(dated, True), (undated, False)]
    if not newest_first:
        ordered.reverse()
    return [
        Stretch(condition, is_dated) for condition, is_dated in ordered if condition is not None
    ]


def ordered_by(columns: Sequence[sa.ColumnElement[Any]], newest_first: bool) -> list[Any]:
    return [c.desc() if newest_first else c.asc() for c in columns]
