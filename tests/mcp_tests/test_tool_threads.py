"""How many tool calls' use cases run at once in one process: at most the store's bound,
and a call that waits on a model provider is never held behind that bound."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio
import pytest
from mcp.types import CallToolResult
from pydantic import BaseModel

from mailfathom.domain.access import Caller, Permission, ToolCategory
from mailfathom.entrypoints.mcp.registry import (
    READ_ONLY,
    ToolRegistry,
    ToolSpec,
    current_caller,
)

CALLER = Caller(frozenset({Permission.MAIL_READ}), "agents")


class Answer(BaseModel):
    ok: bool = True


async def _unused() -> CallToolResult:
    return CallToolResult(content=[])


def _spec(name: str, waits: Callable[[], bool] | None = None) -> ToolSpec:
    return ToolSpec(
        name,
        name,
        "A probe.",
        ToolCategory.MAILBOX,
        frozenset({Permission.MAIL_READ}),
        READ_ONLY,
        _unused,
        waits_on_provider=waits,
    )


class Overlap:
    """The most use cases seen running at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = 0
        self.most = 0

    def call(self, caller: Caller) -> Answer:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        # Long enough for every other call started with it to be running too, were it not
        # held back.
        time.sleep(0.05)
        with self._lock:
            self.running -= 1
        return Answer()


@pytest.mark.parametrize("bound", [1, 3])
def test_no_more_store_calls_run_at_once_than_the_bound(bound: int) -> None:
    registry = ToolRegistry(store_threads=bound)
    registry.add(_spec("reads"))
    overlap = Overlap()

    async def main() -> None:
        current_caller.set(CALLER)
        async with anyio.create_task_group() as group:
            for _ in range(bound * 4):
                group.start_soon(registry.run, "reads", overlap.call)

    anyio.run(main)
    assert overlap.most == bound


def test_a_call_waiting_on_a_provider_is_not_held_behind_store_calls() -> None:
    registry = ToolRegistry(store_threads=1)
    registry.add(_spec("reads"))
    registry.add(_spec("asks", waits=lambda: True))
    registry.add(_spec("asks_not_now", waits=lambda: False))
    holding = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def held(caller: Caller) -> Answer:
        holding.set()
        release.wait(30)
        order.append("held")
        return Answer()

    def asks(caller: Caller) -> Answer:
        order.append("asks")
        return Answer()

    async def main() -> None:
        current_caller.set(CALLER)
        async with anyio.create_task_group() as group:
            group.start_soon(registry.run, "reads", held)
            await anyio.to_thread.run_sync(holding.wait, 30)
            with anyio.fail_after(30):
                answer = await registry.run("asks", asks)
            assert not answer.is_error
            # A tool whose provider is off this time is the store's work like any other.
            group.start_soon(registry.run, "asks_not_now", asks)
            await anyio.sleep(0.05)
            release.set()

    anyio.run(main)
    assert order == ["asks", "held", "asks"]
