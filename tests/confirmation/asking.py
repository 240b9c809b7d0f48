"""A person answering the question put before mail leaves, as the official client's
elicitation callback: what they answer, and what they were asked."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import ElicitRequestParams, ElicitResult

Answering = Callable[[ElicitRequestParams], Awaitable[ElicitResult]]


class Person:
    """The official client's elicitation callback, answering as told and keeping what it
    was asked."""

    def __init__(self, answer: Answering) -> None:
        self._answer = answer
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        return await self._answer(params)


def choosing(value: object) -> Answering:
    async def answer(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action="accept", content={"choice": value})  # type: ignore[dict-item]

    return answer


def acting(action: str, content: dict[str, Any] | None = None) -> Answering:
    async def answer(params: ElicitRequestParams) -> ElicitResult:
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


# Answers that choose nothing, and the code each is refused with.
NO_CHOICE = [
    (acting("decline"), 59001),
    (acting("cancel"), 59001),
    (choosing("sendLater"), 59003),
    (choosing(None), 59003),
    (acting("accept", {}), 59003),
    (acting("accept", {"choice": "send", "also": "cancel"}), 59003),
]
NO_CHOICE_IDS = ["declined", "dismissed", "unknown", "null", "empty", "extra-field"]
