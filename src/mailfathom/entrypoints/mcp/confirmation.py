"""The confirmation port over the calling client's form elicitation.

One question, with exactly three choices (an enumeration with a title per choice), goes to the
client. How it travels follows the protocol the client speaks: from protocol 2026-07-28 on, the
question is this call's answer (`input_required`) and the call is made again carrying the
person's answer, with the question's binding and the time it was asked in the request state
(sealed by the SDK); before that, the server sends `elicitation/create` within the call and
waits at most `McpEndpoint.ConfirmationTimeoutSeconds`. Either way the use case holds no
connection to a mail server while the person decides.

A client that declared no form elicitation is never asked: it gets `UNAVAILABLE`. Input
responses that arrive without a question this server put are ignored, so no argument can
stand in for an answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
)
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ValidationError

from mailfathom.app.confirmation.ports import (
    Answer,
    AnswerKind,
    Choice,
    Question,
    QuestionOutstanding,
)
from mailfathom.domain.access import Caller
from mailfathom.entrypoints.mcp.registry import ToolRegistry

REQUEST_KEY = "mailfathom.confirmation"
_STATE_KEY = "mailfathomConfirmation"
_FIELD = "choice"
_ROUND_TRIP_VERSION = "2026-07-28"


def requested_schema(question: Question) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            _FIELD: {
                "type": "string",
                "title": question.choice_title,
                "oneOf": [{"const": c.value, "title": label} for c, label in question.choices],
            }
        },
        "required": [_FIELD],
    }


def _chosen(result: ElicitResult, binding: str) -> Answer:
    if result.action != "accept":
        return Answer(AnswerKind.DECLINED, binding)
    content = result.content or {}
    value = content.get(_FIELD) if isinstance(content, dict) else None
    for choice in Choice:
        if value == choice.value and len(content) == 1:
            return Answer(AnswerKind.CHOSEN, binding, choice)
    return Answer(AnswerKind.NOT_UNDERSTOOD, binding)


class ElicitedConfirmation:
    """`Confirmation` for one tool call, asked through that call's client."""

    def __init__(
        self, ctx: Context[Any, Any], timeout: float, clock: Callable[[], float] = time.time
    ) -> None:
        self._ctx = ctx
        self._timeout = timeout
        self._clock = clock

    def can_ask(self) -> bool:
        capabilities = self._ctx.client_capabilities
        elicitation = capabilities.elicitation if capabilities is not None else None
        # A bare `elicitation: {}` (the shape before modes existed) means form elicitation.
        return elicitation is not None and (elicitation.form is not None or elicitation.url is None)

    def round_trip(self) -> bool:
        version = self._ctx.protocol_version
        return version is not None and is_version_at_least(version, _ROUND_TRIP_VERSION)

    def ask(self, question: Question) -> Answer:
        if not self.can_ask():
            return Answer(AnswerKind.UNAVAILABLE)
        if self.round_trip():
            return self._answered_round(question)
        return anyio.from_thread.run(self._ask_now, question)

    def _answered_round(self, question: Question) -> Answer:
        state = _state(self._ctx.request_state)
        if state is None:
            raise QuestionOutstanding(question)
        binding, asked_at = state
        if self._clock() - asked_at > self._timeout:
            return Answer(AnswerKind.EXPIRED, binding)
        responses = self._ctx.input_responses or {}
        response = responses.get(REQUEST_KEY)
        if not isinstance(response, ElicitResult):
            return Answer(AnswerKind.NOT_UNDERSTOOD, binding)
        return _chosen(response, binding)

    async def _ask_now(self, question: Question) -> Answer:
        try:
            with anyio.fail_after(self._timeout):
                result = await self._ctx.session.elicit_form(
                    message=question.text,
                    requested_schema=requested_schema(question),
                    related_request_id=self._ctx.request_id,
                )
        except TimeoutError:
            return Answer(AnswerKind.EXPIRED, question.binding)
        except NoBackChannelError:
            return Answer(AnswerKind.UNAVAILABLE)
        except (MCPError, ValidationError):
            return Answer(AnswerKind.NOT_UNDERSTOOD, question.binding)
        return _chosen(result, question.binding)

    def outstanding(self, question: Question) -> InputRequiredResult:
        """The call's answer while the question waits: the question, and the state the next
        round is read against."""
        state = {_STATE_KEY: {"binding": question.binding, "askedAt": self._clock()}}
        return InputRequiredResult(
            input_requests={
                REQUEST_KEY: ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=question.text, requested_schema=requested_schema(question)
                    )
                )
            },
            request_state=json.dumps(state, separators=(",", ":")),
        )


def _state(text: str | None) -> tuple[str, float] | None:
    if not text:
        return None
    try:
        decoded = json.loads(text)
    except ValueError:
        return None
    entry = decoded.get(_STATE_KEY) if isinstance(decoded, dict) else None
    if not isinstance(entry, dict):
        return None
    binding, asked_at = entry.get("binding"), entry.get("askedAt")
    if not isinstance(binding, str) or not isinstance(asked_at, int | float):
        return None
    return binding, float(asked_at)


async def run_confirmed(
    registry: ToolRegistry,
    name: str,
    confirmation: ElicitedConfirmation,
    call: Callable[[Caller], BaseModel],
) -> CallToolResult | InputRequiredResult:
    """`ToolRegistry.run`, answering with the question when it is to travel as this call's
    answer."""
    try:
        return await registry.run(name, call)
    except QuestionOutstanding as outstanding:
        return confirmation.outstanding(outstanding.question)
