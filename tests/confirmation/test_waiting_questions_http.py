"""Questions waiting for a person hold no worker of the server, and one caller may keep only
so many waiting, over Streamable HTTP with the official client in both protocol generations.

With the older generation the server holds the call open while the person decides; with
2026-07-28 the question is the call's answer and the server holds nothing. Either way another
caller's call is served while more questions wait than the server has worker threads.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from log_audit import register_all
from mcp_tests.client import code, structured
from sending.served import Served

from .asking_served import (
    MODES,
    WAITING,
    HeldPerson,
    connected,
    send_arguments,
    serve_asking,
    until,
    written,
)

SUBJECT = "Seating plan for the spring gathering"
BODY = "The long table goes by the window this year.\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    register_all([SUBJECT, BODY.strip(), "guest@example.net", "desk@example.org", "Front Desk"])
    yield from serve_asking(tmp_path_factory.mktemp("waiting"))


async def _send(client: Client, results: list[CallToolResult], **more: Any) -> None:
    results.append(await client.call_tool("send_email", send_arguments(SUBJECT, BODY, **more)))


@pytest.mark.parametrize("mode", MODES)
def test_questions_waiting_past_the_worker_count_leave_other_callers_served(
    served: Served, mode: str
) -> None:
    person = HeldPerson()
    results: list[CallToolResult] = []

    async def run() -> CallToolResult:
        async with (
            connected(served, "asks", mode, person) as asking,
            connected(served, "reader", "legacy") as reading,
            anyio.create_task_group() as group,
        ):
            for _ in range(WAITING):
                group.start_soon(_send, asking, results)
            await until(lambda: len(person.asked) == WAITING, "every question was put")
            with anyio.fail_after(60):
                listed = await reading.call_tool("list_accounts", {})
            # Served while every question still waits: no call of the asking caller ended.
            assert results == []
            person.release()
        return listed

    listed = anyio.run(run)
    assert [a["accountId"] for a in structured(listed)["accounts"]] == ["work"]
    assert [structured(r)["status"] for r in results] == ["cancelled"] * WAITING


def test_a_caller_past_its_waiting_questions_is_refused_and_nothing_is_written(
    served: Served,
) -> None:
    person, other = HeldPerson(), HeldPerson()
    results: list[CallToolResult] = []
    refused: list[CallToolResult] = []
    others: list[CallToolResult] = []
    key = uuid.uuid4().hex
    before = written(served)

    async def run() -> None:
        async with (
            connected(served, "asks", "legacy", person) as asking,
            connected(served, "asks-too", "legacy", other) as asking_too,
            anyio.create_task_group() as group,
        ):
            for _ in range(WAITING):
                group.start_soon(_send, asking, results)
            await until(lambda: len(person.asked) == WAITING, "every question was put")
            await _send(asking, refused, idempotencyKey=key)
            assert len(person.asked) == WAITING
            # The bound is the caller's own: another caller is still asked.
            group.start_soon(_send, asking_too, others)
            await until(lambda: len(other.asked) == 1, "the other caller's question was put")
            other.release()
            await until(lambda: len(others) == 1, "the other caller's call ended")
            # A place freed by an answer is taken by the caller's next question.
            person.release(1)
            await until(lambda: len(results) == 1, "one answered call ended")
            group.start_soon(_send, asking, results)
            await until(lambda: len(person.asked) == WAITING + 1, "the next question was put")
            person.release()

    anyio.run(run)
    [refusal] = refused
    assert code(refusal) == 59006
    assert structured(others[0])["status"] == "cancelled"
    assert [structured(r)["status"] for r in results] == ["cancelled"] * (WAITING + 1)
    keys, drafts, alerts = written(served)
    assert key not in keys
    assert (drafts, alerts) == before[1:]


def test_with_the_round_trip_generation_nothing_is_held_and_no_bound_applies(
    served: Served,
) -> None:
    person = HeldPerson()
    results: list[CallToolResult] = []

    async def run() -> None:
        async with (
            connected(served, "asks", MODES[0], person) as asking,
            anyio.create_task_group() as group,
        ):
            for _ in range(WAITING + 1):
                group.start_soon(_send, asking, results)
            await until(lambda: len(person.asked) == WAITING + 1, "every question was put")
            person.release()

    anyio.run(run)
    assert [structured(r)["status"] for r in results] == ["cancelled"] * (WAITING + 1)
