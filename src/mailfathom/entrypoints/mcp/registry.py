"""Tools as this endpoint knows them: category, permissions, and one way to run them.

`ToolRegistry.run` is the single path every call takes into a use case: it resolves the
caller, runs the use case off the event loop, and maps any failure onto the error contract
(`MailFathom error NNNNN: <sentence>`), collapsing everything outside the boundary category to
54001 and logging what it withheld.
"""

from __future__ import annotations

import contextvars
import traceback
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import structlog
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from mailfathom.app.confirmation.ports import QuestionOutstanding
from mailfathom.domain.access import Caller, Permission, ToolCategory
from mailfathom.domain.codes import Code
from mailfathom.domain.config import DEFAULT_TOOL_THREADS
from mailfathom.domain.errors import Category, MailFathomError
from mailfathom.entrypoints.mcp.own_results import ModelResult
from mailfathom.entrypoints.mcp.result_text import compact_text

log = structlog.get_logger("mailfathom.mcp")

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
UNDIAGNOSED_MESSAGE = "The call failed; the server log records why."

current_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "mailfathom_caller", default=None
)


@dataclass(frozen=True, slots=True)
class ToolVariant:
    """A tool as offered to a caller whose grant also covers `permissions`: further
    arguments, and the description and annotations of what they do. A caller the grant does
    not cover is offered the tool's own form, in which those arguments are unknown."""

    permissions: frozenset[Permission]
    description: str
    annotations: ToolAnnotations
    function: Callable[..., Awaitable[CallToolResult | InputRequiredResult]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    category: ToolCategory | None
    # The declaration of the use case behind the tool (its module's PERMISSIONS), never a
    # second one written here.
    permissions: frozenset[Permission]
    annotations: ToolAnnotations
    function: Callable[..., Awaitable[CallToolResult | InputRequiredResult]]
    # Wider forms, the first one a caller's grant covers being the one it is offered.
    variants: tuple[ToolVariant, ...] = ()
    # Whether the deployment can serve the tool now, asked at every listing; None: always.
    # A tool that cannot be served now is left out of tools/list, and a call arriving anyway
    # still reaches its use case, which refuses it with its own code.
    available: Callable[[], bool] | None = None
    # Whether the deployment, as configured, can serve the tool at all; None: always. Read
    # where the endpoint states what it serves once (the scopes its metadata names), so a
    # permission only such a tool needs is not advertised by a deployment without it.
    capable: Callable[[], bool] | None = None
    # Whether a call may wait on another server (a chat or embedding model provider) for
    # long; None: never. Such a call runs beside the store's work (see `ToolRegistry`).
    waits_on_provider: Callable[[], bool] | None = None


def error_result(code: int, message: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"MailFathom error {code}: {message}")],
        is_error=True,
    )


def _success(model: BaseModel) -> CallToolResult:
    structured = model.model_dump(mode="json")
    return ModelResult.of(model, compact_text(model, structured), structured)


class ToolRegistry:
    """The tools and how their use cases run. A use case runs on a worker thread, and at
    most `store_threads` of them run at once in this process: each reads and writes the store
    with the interpreter's lock held but while it waits on the database, and every further
    thread contending for that lock costs CPU in switches, so thirty calls on thirty threads
    cost a third more per call than the same calls queued for two (the default: one thread
    works while the other waits on the database). A call that may wait on
    a model provider for seconds runs outside that bound, so it never holds the store's
    calls back."""

    def __init__(self, store_threads: int = DEFAULT_TOOL_THREADS) -> None:
        self.specs: dict[str, ToolSpec] = {}
        self._store_work = anyio.CapacityLimiter(store_threads)

    def add(self, spec: ToolSpec) -> None:
        self.specs[spec.name] = spec

    async def run(self, name: str, call: Callable[[Caller], BaseModel]) -> CallToolResult:
        caller = current_caller.get()
        if caller is None:
            log.error("tool.no_caller", tool=name)
            return error_result(Code.UNDIAGNOSED, UNDIAGNOSED_MESSAGE)
        try:
            model = await anyio.to_thread.run_sync(call, caller, limiter=self._limiter(name))
        except QuestionOutstanding:
            # Not a failure: the question is this call's answer (see `confirmation`).
            raise
        except MailFathomError as error:
            if error.category is Category.BOUNDARY:
                return error_result(error.code, error.message)
            return log_undiagnosed(name, error)
        except Exception as error:
            return log_undiagnosed(name, error)
        return _success(model)

    def _limiter(self, name: str) -> anyio.CapacityLimiter | None:
        spec = self.specs.get(name)
        if spec is not None and spec.waits_on_provider is not None and spec.waits_on_provider():
            return None
        return self._store_work


def log_undiagnosed(name: str, error: BaseException) -> CallToolResult:
    """54001, with what it withholds logged: where it happened and the failure's type."""
    correlation = uuid.uuid4().hex[:16]
    code = error.code if isinstance(error, MailFathomError) else None
    log.error(
        "tool.undiagnosed_failure",
        tool=name,
        correlation_id=correlation,
        internal_code=code,
        error_type=type(error).__name__,
        stack=failure_frames(error),
    )
    return error_result(Code.UNDIAGNOSED, UNDIAGNOSED_MESSAGE)


def failure_frames(error: BaseException) -> list[str]:
    """Where the failure happened, frame by frame, without the exception's message: a
    library's message can quote the values it was handed, and those can be mail."""
    frames: list[str] = []
    current: BaseException | None = error
    while current is not None and len(frames) < 60:
        frames.extend(
            f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_tb(current.__traceback__)
        )
        current = current.__cause__ or current.__context__
        if current is not None:
            frames.append(f"caused by {type(current).__name__}")
    return frames


def outcome_code(result: Any) -> int | None:
    """The code a failed result carries, read back from its text."""
    if not isinstance(result, CallToolResult) or not result.is_error:
        return None
    for block in result.content:
        text = getattr(block, "text", "")
        if text.startswith("MailFathom error "):
            digits = text[len("MailFathom error ") :][:5]
            if digits.isdigit():
                return int(digits)
    return None
