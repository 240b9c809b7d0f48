"""sentOnOrAfter and sentBefore over Streamable HTTP with the official client: list_emails
and search_emails, alone, beside the received-time filters, and across cursor pages."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from mcp_tests.client import call, code, structured
from mcp_tests.sent_deployment import (
    BADLY_DATED,
    DATED,
    KEY,
    UNDATED,
    SentDeployment,
    received,
    sent,
    subject,
)
from mcp_tests.sent_deployment import sent_deployment as sent_deployment


def _iso(instant: datetime) -> str:
    return instant.isoformat()


def _walk(d: SentDeployment, *, page_size: int = 2, **filters: Any) -> list[str]:
    found: list[str] = []
    cursor = None
    for _ in range(50):
        args = {**filters, "pageSize": page_size}
        if cursor:
            args["cursor"] = cursor
        page = structured(call(d.url, KEY, "list_emails", args))
        found.extend(e["subject"] for e in page["emails"])
        cursor = page.get("nextCursor")
        if not cursor:
            return found
    raise AssertionError("the walk did not end")


def _search(d: SentDeployment, words: str, **filters: Any) -> list[str]:
    answer = structured(call(d.url, KEY, "search_emails", {"queryText": words, **filters}))
    return sorted(m["summary"]["subject"] for m in answer["matches"])


def test_every_note_is_listed_without_a_sent_filter(sent_deployment: SentDeployment) -> None:
    listed = _walk(sent_deployment)
    assert sorted(listed) == sorted([*(subject(n) for n in range(DATED)), UNDATED, BADLY_DATED])


def test_sent_on_or_after_is_inclusive_and_sent_before_exclusive(
    sent_deployment: SentDeployment,
) -> None:
    d = sent_deployment
    window: dict[str, Any] = {"sentOnOrAfter": _iso(sent(1)), "sentBefore": _iso(sent(3))}
    # Newest received first: note 1 was received after note 2.
    assert _walk(d, **window) == [subject(1), subject(2)]
    assert _search(d, "orchard", **window) == [subject(1), subject(2)]
    # The same instants written in another zone, and without a zone (read as UTC).
    east = timezone(timedelta(hours=-7))
    shifted: dict[str, Any] = {
        "sentOnOrAfter": _iso(sent(1).astimezone(east)),
        "sentBefore": "2026-04-04T10:00",
    }
    assert _walk(d, **shifted) == [subject(1), subject(2)]
    just_after: dict[str, Any] = {"sentOnOrAfter": _iso(sent(1) + timedelta(seconds=1))}
    assert subject(1) not in _walk(d, **just_after)
    assert _walk(d, sentBefore=_iso(sent(1) + timedelta(seconds=1))) == [subject(0), subject(1)]


def test_mail_without_a_usable_date_matches_no_sent_filter(
    sent_deployment: SentDeployment,
) -> None:
    d = sent_deployment
    everything: dict[str, Any] = {"sentOnOrAfter": "1900-01-01T00:00:00Z"}
    assert sorted(_walk(d, **everything)) == sorted(subject(n) for n in range(DATED))
    assert sorted(_walk(d, sentBefore="2999-01-01T00:00:00Z")) == sorted(
        subject(n) for n in range(DATED)
    )
    # "pruning" is in notes 1 and 3 and the undated one; the badly dated one carries it too.
    assert _search(d, "pruning") == sorted([subject(1), subject(3), UNDATED, BADLY_DATED])
    assert _search(d, "pruning", sentBefore="2999-01-01T00:00:00Z") == [subject(1), subject(3)]


def test_sent_filters_combine_with_received_filters(sent_deployment: SentDeployment) -> None:
    d = sent_deployment
    sent_window: dict[str, Any] = {"sentOnOrAfter": _iso(sent(1)), "sentBefore": _iso(sent(4))}
    recent: dict[str, Any] = {**sent_window, "receivedOnOrAfter": _iso(received(2))}
    assert _walk(d, **recent) == [subject(1), subject(2)]
    assert _search(d, "orchard", **recent) == [subject(1), subject(2)]
    older: dict[str, Any] = {**sent_window, "receivedBefore": _iso(received(2))}
    assert _walk(d, **older) == [subject(3)]
    assert _search(d, "pruning", **older) == [subject(3)]


def test_a_cursor_walks_a_sent_filter_and_is_bound_to_it(sent_deployment: SentDeployment) -> None:
    d = sent_deployment
    window: dict[str, Any] = {"sentOnOrAfter": _iso(sent(0)), "sentBefore": _iso(sent(DATED))}
    assert _walk(d, page_size=2, **window) == [subject(n) for n in range(DATED)]
    assert _walk(d, page_size=2, direction="oldestFirst", **window) == [
        subject(n) for n in reversed(range(DATED))
    ]
    first = structured(call(d.url, KEY, "list_emails", {**window, "pageSize": 2}))
    cursor = first["nextCursor"]
    same = call(d.url, KEY, "list_emails", {**window, "pageSize": 2, "cursor": cursor})
    assert [e["subject"] for e in structured(same)["emails"]] == [subject(2), subject(3)]
    for other in (
        {"sentOnOrAfter": window["sentOnOrAfter"]},
        {"sentBefore": window["sentBefore"]},
        {**window, "sentBefore": _iso(sent(DATED + 1))},
        {"receivedOnOrAfter": window["sentOnOrAfter"], "sentBefore": window["sentBefore"]},
    ):
        moved = call(d.url, KEY, "list_emails", {**other, "pageSize": 2, "cursor": cursor})
        assert code(moved) == 52002, other
    unfiltered = structured(call(d.url, KEY, "list_emails", {"pageSize": 2}))["nextCursor"]
    assert code(call(d.url, KEY, "list_emails", {**window, "cursor": unfiltered})) == 52002


@pytest.mark.parametrize("tool", ["list_emails", "search_emails"])
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"sentOnOrAfter": "2026-04-02T00:00:00Z", "sentBefore": "2026-04-01T23:59:59Z"}, 51002),
        ({"sentOnOrAfter": "2026-04-02T00:00:00+02:00", "sentBefore": "2026-04-01T21:00Z"}, 51002),
        ({"sentOnOrAfter": "the second of April"}, 51017),
        ({"sentBefore": "2026-13-01T00:00:00Z"}, 51017),
        ({"sentBefore": 1775000000}, 51017),
    ],
)
def test_sent_bounds_are_refused_as_received_bounds_are(
    sent_deployment: SentDeployment, tool: str, arguments: dict[str, Any], expected: int
) -> None:
    base = {"queryText": "orchard"} if tool == "search_emails" else {}
    assert code(call(sent_deployment.url, KEY, tool, {**base, **arguments})) == expected
    received_form = {k.replace("sent", "received"): v for k, v in arguments.items()}
    assert code(call(sent_deployment.url, KEY, tool, {**base, **received_form})) == expected


def test_an_empty_sent_window_is_answered_with_nothing_as_a_received_one_is(
    sent_deployment: SentDeployment,
) -> None:
    at = _iso(sent(1))
    assert _walk(sent_deployment, sentOnOrAfter=at, sentBefore=at) == []
    assert _walk(sent_deployment, receivedOnOrAfter=at, receivedBefore=at) == []
