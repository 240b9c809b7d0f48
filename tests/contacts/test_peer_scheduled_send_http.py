"""Two local accounts of one deployment, served by `mailfathom serve` and reached with the
official client over HTTP: the agent finds its colleague in the contact book, schedules two
drafts to the address the book shows with `sendAfter`, withdraws one, and the delivery pass
holds the other across a restart of the server until its instant, then puts it in the
colleague's inbox once; the withdrawn one never arrives."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mcp_tests.client import call, structured
from sending.served import KEYS, Served, _callers, _local_account, serve
from waiting import wait_for

AGENT = KEYS["agent"]
AGENT_ADDRESS = "planner@team.example"
COLLEAGUE_ADDRESS = "Rota.Keeper@team.example"
HELD = "Rota for the week after next"
WITHDRAWN = "Rota draft that was withdrawn"
# Far enough ahead that the restart and the checks around it finish before it.
LEAD = timedelta(seconds=12)


def _delivery(address: str) -> str:
    return f'[Accounts.Delivery]\nEnabled = true\nAddress = "{address}"\n'


def _config(root: Path) -> str:
    planner = _local_account("planner", AGENT_ADDRESS, _delivery(AGENT_ADDRESS))
    keeper = _local_account("keeper", COLLEAGUE_ADDRESS, _delivery(COLLEAGUE_ADDRESS))
    return f"""
[Store]
DataDir = "{root / "data"}"

[MailDelivery]
UnvouchedRecipients = "Refuse"
{planner}{keeper}{_callers()}"""


class Deployment:
    """A served deployment that can be stopped and served again over the same store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._serving = ExitStack()
        self.served = self.start()

    def start(self) -> Served:
        serving = contextmanager(serve)(self.root, _config(self.root), None, deliver=True)
        return self._serving.enter_context(serving)

    def stop(self) -> None:
        self._serving.close()

    def restart(self) -> None:
        self.stop()
        self.served = self.start()

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return structured(call(self.served.url, AGENT, tool, arguments))


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    register_all([HELD, WITHDRAWN, AGENT_ADDRESS, COLLEAGUE_ADDRESS])
    d = Deployment(tmp_path)
    try:
        yield d
    finally:
        d.stop()


def _inbox_subjects(d: Deployment) -> list[str]:
    page = d.call("list_emails", {"accounts": ["keeper"], "folders": ["INBOX"]})
    return [e["subject"] for e in page["emails"]]


def _lead_beyond_a_restart(d: Deployment) -> timedelta:
    started = time.monotonic()
    d.restart()
    return LEAD + 4 * timedelta(seconds=time.monotonic() - started)


def test_an_agent_finds_its_colleague_and_a_scheduled_draft_waits_across_a_restart(
    deployment: Deployment,
) -> None:
    d = deployment
    (colleague,) = d.call("list_contacts", {"search": "keeper acc"})["contacts"]
    assert (colleague["origin"], colleague["displayName"]) == ("asserted", "Keeper account")
    assert colleague["preferredAddress"] == COLLEAGUE_ADDRESS
    found = d.call("get_contact", {"address": COLLEAGUE_ADDRESS.lower()})["contact"]
    assert found["contactId"] == colleague["contactId"]

    # The instant must lie beyond a restart however busy the host is: a first restart
    # measures one.
    lead = _lead_beyond_a_restart(d)
    instant = (datetime.now(UTC) + lead).replace(microsecond=0)
    answers = []
    for subject in (HELD, WITHDRAWN):
        draft = d.call(
            "save_draft",
            {
                "account": "planner",
                "subject": subject,
                "to": [colleague["preferredAddress"]],
                "plainTextBody": f"{subject}: you are on Tuesday and Friday.",
            },
        )
        answer = d.call(
            "send_draft",
            {
                "draftId": draft["draftId"],
                "sendAfter": instant.isoformat(),
            },
        )
        assert answer["status"] == "queued"
        assert datetime.fromisoformat(answer["sendAfter"].replace("Z", "+00:00")) == instant
        answers.append(answer)
    held, withdrawn = (a["outgoingEmailId"] for a in answers)
    cancelled = d.call("cancel_outgoing_email", {"outgoingEmailId": withdrawn})
    assert cancelled["state"] == "cancelled"
    assert _inbox_subjects(d) == []

    d.restart()
    assert datetime.now(UTC) < instant, "the restart took longer than the lead"
    status = d.call("get_outgoing_email", {"outgoingEmailId": held})
    assert (status["state"], status["attemptCount"]) == ("queued", 0)
    assert _inbox_subjects(d) == []

    sent = wait_for(
        lambda: (
            (s := d.call("get_outgoing_email", {"outgoingEmailId": held}))["state"] == "sent" and s
        ),
        "the held send was not recorded sent",
        timeout=lead.seconds + 30,
    )
    assert datetime.now(UTC) >= instant
    assert sent["attemptCount"] == 1
    assert [r["state"] for r in sent["recipients"]] == ["accepted"]
    wait_for(
        lambda: _inbox_subjects(d) == [HELD], "the colleague's inbox never held it", timeout=60
    )
    # Due at the same instant, the withdrawn one was never offered.
    gone = d.call("get_outgoing_email", {"outgoingEmailId": withdrawn})
    assert (gone["state"], gone["attemptCount"]) == ("cancelled", 0)
    assert _inbox_subjects(d) == [HELD]
    received = d.call("search_emails", {"queryText": "withdrawn", "accounts": ["keeper"]})
    assert received["matches"] == []
