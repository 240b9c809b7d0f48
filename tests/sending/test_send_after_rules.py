"""What send_draft accepts as a sendAfter: an ISO 8601 instant carrying its offset, within 30
days; each accepted spelling names the instant read back in UTC, and every refusal is 51013
naming the argument and never the text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mailfathom.app.sending.scheduling import MAX_AHEAD, not_before, send_after
from mailfathom.domain.errors import Refusal

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("given", "instant"),
    [
        ("2026-12-03T09:00:00Z", datetime(2026, 12, 3, 9, tzinfo=UTC)),
        ("2026-12-03T09:00Z", datetime(2026, 12, 3, 9, tzinfo=UTC)),
        ("2026-12-03t10:00:00+01:00", datetime(2026, 12, 3, 9, tzinfo=UTC)),
        ("2026-12-03T04:30:00-04:30", datetime(2026, 12, 3, 9, tzinfo=UTC)),
        ("2026-12-03T09:00:00.123456789z", datetime(2026, 12, 3, 9, 0, 0, 123456, tzinfo=UTC)),
        ("2020-01-01T00:00:00Z", datetime(2020, 1, 1, tzinfo=UTC)),
    ],
)
def test_an_instant_with_its_offset_is_read_in_utc(given: str, instant: datetime) -> None:
    read = send_after(given, NOW)
    assert read == instant
    assert read is not None
    assert read.utcoffset() == timedelta(0)


def test_nothing_given_asks_nothing() -> None:
    assert send_after(None, NOW) is None


def test_the_bound_is_thirty_days_from_now_inclusive() -> None:
    edge = NOW + MAX_AHEAD
    assert send_after(edge.isoformat(), NOW) == edge
    with pytest.raises(Refusal) as refused:
        send_after((edge + timedelta(seconds=1)).isoformat(), NOW)
    assert refused.value.code == 51013


@pytest.mark.parametrize(
    "given",
    [
        "2026-12-03T09:00:00",
        "2026-12-03",
        "2026-12-03T09Z",
        "2026-12-03T09:00:00+0100",
        "2026-12-03T09:00:00 Z",
        " 2026-12-03T09:00:00Z",
        "2026-12-03T09:00:00Z\n",
        "2026-W49-4T09:00:00Z",
        "２０２６-12-03T09:00:00Z",
        "2026-12-32T09:00:00Z",
        "2026-12-03T24:00:00Z",
        "0001-01-01T00:00:00+14:00",
        "2026-12-03T09:00:00Z" + "0" * 40,
        1767000000,
        ["2026-12-03T09:00:00Z"],
    ],
)
def test_anything_else_is_refused_naming_the_argument(given: object) -> None:
    with pytest.raises(Refusal) as refused:
        send_after(given, NOW)
    assert refused.value.code == 51013
    assert "sendAfter" in refused.value.message
    assert str(given) not in refused.value.message


def test_a_record_is_due_after_the_hold_and_not_before_the_instant() -> None:
    held = NOW + timedelta(minutes=5)
    assert not_before(held, None) == held
    assert not_before(held, NOW + timedelta(hours=1)) == NOW + timedelta(hours=1)
    assert not_before(held, NOW - timedelta(days=1)) == held
