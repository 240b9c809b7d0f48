"""The confirmation port over the calling client's form elicitation.

One question, with exactly three choices (an enumeration with a title per choice), goes to the
client. The use case runs in a worker thread and never waits there for a person: asking ends
its run with nothing written (`QuestionOutstanding`), and the run that acts on the answer is a
second one. How the question travels between the two follows the protocol the client speaks:
from protocol 2026-07-28 on, the question is this call's answer (`input_required`) and the
client makes the call again carrying the person's answer, with the question's binding and the
time it was asked in the request state (sealed by the SDK); before that, the server sends
`elicitation/create` within the call, waits on its event loop (at most
`McpEndpoint.ConfirmationTimeoutSeconds`, holding no worker thread) and then runs the use case
again with the answer. Either way the use case holds no connection to a mail server while the
person decides.

A question waiting within a call holds the call open, so one caller entry may keep at most
`McpEndpoint.QuestionsWaitingPerCaller` of them waiting; a call past that is refused (59006)
before anything is asked or written. Replicas count the questions of every replica, in the
store (`replica_state`). With the newer generation the server holds nothing while
the person decides, and the bound does not apply.

A client that declared no form elicitation is never asked: it gets `UNAVAILABLE`. Input
responses that arrive without a question this server put are ignored, so no argument can
stand in for an answer.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import structlog
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
from mailfathom.domain.codes import Code
from mailfathom.domain.config import (
    DEFAULT_CONFIRMATION_TIMEOUT_SECONDS,
    DEFAULT_QUESTIONS_WAITING_PER_CALLER,
)
from mailfathom.entrypoints.mcp.registry import (
    ToolRegistry,
    current_caller,
    error_result,
    log_undiagnosed,
)
from mailfathom.entrypoints.mcp.replica_state import Replicas
from mailfathom.entrypoints.mcp.sessions import SESSION_HEADER

log = structlog.get_logger("mailfathom.confirmation")

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


class Questions:
    """The questions this endpoint puts to people: how long a person has to answer one
    (`timeout`, seconds), and how many one caller entry may keep waiting within calls held
    open (`per_caller`). One process keeps the count on the event loop, which alone changes
    it; replicas keep it in the store (`replicas`), and a question's age on the store's
    clock, since the call carrying the answer may reach another machine (`now`)."""

    def __init__(
        self,
        timeout: float = DEFAULT_CONFIRMATION_TIMEOUT_SECONDS,
        per_caller: int = DEFAULT_QUESTIONS_WAITING_PER_CALLER,
        replicas: Replicas | None = None,
    ) -> None:
        self.timeout = timeout
        self.per_caller = per_caller
        self._replicas = replicas
        self._waiting: dict[str, int] = {}

    def now(self) -> float:
        """The time a question is asked at and its age judged by, in seconds."""
        if self._replicas is not None:
            return self._replicas.now().timestamp()
        return time.time()

    async def waiting(self, caller: str) -> int:
        if self._replicas is not None:
            return await self._replicas.questions_waiting(caller)
        return self._waiting.get(caller, 0)

    @contextlib.asynccontextmanager
    async def held(self, caller: str, session_id: str | None) -> AsyncIterator[bool]:
        """Hold a place for one more question of `caller`, put in `session_id`, while the
        block runs; the block is given False, and holds nothing, when the caller has no
        place left."""
        if self._replicas is not None:
            async with self._replicas.question_held(caller, session_id, self.per_caller) as held:
                yield held
            return
        if self._waiting.get(caller, 0) >= self.per_caller:
            yield False
            return
        self._waiting[caller] = self._waiting.get(caller, 0) + 1
        try:
            yield True
        finally:
            left = self._waiting[caller] - 1
            if left:
                self._waiting[caller] = left
            else:
                del self._waiting[caller]


class ElicitedConfirmation:
    """`Confirmation` for one tool call, asked through that call's client."""

    def __init__(
        self,
        ctx: Context[Any, Any],
        questions: Questions,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._ctx = ctx
        self._questions = questions
        self._timeout = questions.timeout
        self._clock = clock or questions.now
        self._answer: Answer | None = None

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
        if self._answer is not None:
            return self._answer
        if self.round_trip():
            return self._answered_round(question)
        raise QuestionOutstanding(question)

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

    async def put(self, question: Question) -> bool:
        """Put `question` within this call and wait on the event loop for the answer, which
        the next run of the call is then given; False, with nothing asked, when the caller
        already keeps as many questions waiting as it may."""
        caller = current_caller.get()
        label = caller.label if caller is not None else ""
        session_id = (self._ctx.headers or {}).get(SESSION_HEADER)
        async with self._questions.held(label, session_id) as placed:
            if not placed:
                log.warning(
                    "confirmation.waiting_bound_reached",
                    caller=label,
                    waiting=await self._questions.waiting(label),
                )
                return False
            self._answer = await self._ask_now(question)
        return True

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
    """`ToolRegistry.run`, up to the question; then either the question as this call's
    answer, or the question put within the call and the call run again with the answer."""
    try:
        return await registry.run(name, call)
    except QuestionOutstanding as outstanding:
        question = outstanding.question
    if confirmation.round_trip():
        return confirmation.outstanding(question)
    if not await confirmation.put(question):
        return error_result(
            Code.QUESTIONS_WAITING_BOUND_REACHED,
            "This caller already keeps as many questions waiting for a person as "
            "McpEndpoint.QuestionsWaitingPerCaller allows; nobody was asked and nothing was "
            "sent or saved. Call again once one of them is answered.",
        )
    try:
        return await registry.run(name, call)
    except QuestionOutstanding as again:
        # The answer is held by now, so no second question is ever outstanding.
        return log_undiagnosed(name, again)
