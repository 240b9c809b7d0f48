"""A draft kept because nobody could be asked reaches an operator's alerting: a warning in the
server log (without anything of the message) and a counter on `/metrics`, over Streamable HTTP
with the official client in both protocol generations."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from log_audit import register_all
from mcp_tests.client import structured
from sending.served import Served

from .asking_served import MODES, connected, log_events, metric, send_arguments, serve_asking

SUBJECT = "Harbour tour tickets for the delegation"
BODY = "Twelve tickets for the Thursday boat, please.\n"
COUNTER = "mailfathom_owner_alerts_raised_total"
LABELS = {"reason": "confirmation_unavailable"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    register_all([SUBJECT, BODY.strip(), "guest@example.net", "desk@example.org", "Front Desk"])
    yield from serve_asking(tmp_path_factory.mktemp("alerts"))


@pytest.mark.parametrize("mode", MODES)
def test_a_draft_kept_unasked_is_counted_and_logged_once(served: Served, mode: str) -> None:
    arguments = send_arguments(SUBJECT, BODY)
    before = metric(served, COUNTER, LABELS)
    logged_before = len(log_events(served, "confirmation.owner_alert_raised"))

    async def send_twice() -> list[dict[str, object]]:
        # A client that declared no form elicitation: nobody can be asked.
        async with connected(served, "asks", mode) as client:
            first = await client.call_tool("send_email", arguments)
            again = await client.call_tool("send_email", arguments)
        return [structured(first), structured(again)]

    first, again = anyio.run(send_twice)
    assert (first["status"], first["reason"]) == ("draft", "confirmation_unavailable")
    assert again["draftId"] == first["draftId"]
    # One alert, counted once: the repeat found it held.
    assert metric(served, COUNTER, LABELS) == before + 1

    lines = log_events(served, "confirmation.owner_alert_raised")
    assert len(lines) == logged_before + 1
    line = lines[-1]
    assert line["level"] == "warning"
    assert line["account"] == "work"
    assert str(line["alert"]).startswith("draft:")
    text = repr(line)
    for withheld in (SUBJECT, BODY.strip(), "guest@example.net", "desk@example.org"):
        assert withheld not in text
    assert str(first["draftId"]) not in text
