"""When a queued send may leave: the `sendAfter` a caller gives send_draft.

An instant is an RFC 3339 date-time (ISO 8601 extended form) that carries its offset, `Z` or
`±HH:MM`; seconds may be left out, and fractions beyond microseconds are dropped. Text without
an offset names a different instant in every zone, so it is refused rather than read as UTC,
and so is anything beyond `MAX_AHEAD`: a record the delivery pass holds for months is one an
operator has forgotten about. An instant already past, or now, asks nothing: the send leaves
as soon as an unscheduled one would. A refusal names the argument and its rule, never the
text given.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_AHEAD = timedelta(days=30)
ARGUMENT = "sendAfter"
_LONGEST = 40
_INSTANT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?"
    r"(?:Z|[+-][0-9]{2}:[0-9]{2})\Z",
    re.ASCII,
)


def _refused() -> Refusal:
    return Refusal(
        Code.MESSAGE_FIELD_NOT_COMPOSABLE,
        f"{ARGUMENT} must be an ISO 8601 instant with its offset (Z, +HH:MM or -HH:MM), at most "
        f"{MAX_AHEAD.days} days ahead.",
    )


def send_after(value: object, now: datetime) -> datetime | None:
    """The instant `value` names, in UTC (None when it was not given); refused with 51013
    when it is no instant with an offset or lies more than `MAX_AHEAD` after `now`."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > _LONGEST:
        raise _refused()
    text = value.upper()
    if _INSTANT.match(text) is None:
        raise _refused()
    try:
        instant = datetime.fromisoformat(text).astimezone(UTC)
    except (ValueError, OverflowError):
        raise _refused() from None
    if instant > now + MAX_AHEAD:
        raise _refused()
    return instant


def not_before(held_until: datetime, instant: datetime | None) -> datetime:
    """When the record first becomes due: after the deployment's hold, and not before the
    instant asked for."""
    return held_until if instant is None else max(held_until, instant)
