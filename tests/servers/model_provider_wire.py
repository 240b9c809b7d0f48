"""The chat-completions wire format of the test model provider: scripted turns as the test
gives them, and an answer as a `chat.completion` object or as the events of a stream."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from .model_provider_text import count_tokens, first_tokens, prompt_tokens

# A word or mark with the spaces after it: stream pieces that join back into the text.
TOKEN_RUN = re.compile(r"\s*(?:\w+|[^\w\s])\s*|\s+")
TURN_KEYS = {"content", "tool_calls", "finish_reason", "usage", "fail", "hold_seconds"}


@dataclass(frozen=True)
class Answer:
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str | None = None
    usage: dict[str, int] | None = None


def scripted(turn: dict[str, Any]) -> Answer:
    """The answer a scripted turn holds (validated when the test set the script)."""
    return Answer(
        turn.get("content"),
        list(turn.get("tool_calls") or []),
        turn.get("finish_reason"),
        turn.get("usage"),
    )


def check_turn(turn: Any) -> dict[str, Any]:
    """A scripted turn as the provider keeps it, or ValueError saying what is wrong."""
    if not isinstance(turn, dict):
        raise ValueError("a turn is an object")
    unknown = set(turn) - {
        "content",
        "tool_calls",
        "finish_reason",
        "usage",
        "fail",
        "hold_seconds",
    }
    if unknown:
        raise ValueError(f"unknown keys in a turn: {sorted(unknown)}")
    if "fail" in turn:
        return dict(turn)
    usage = turn.get("usage") or {}
    if not isinstance(usage, dict) or not all(
        key in ("prompt_tokens", "completion_tokens") and isinstance(value, int)
        for key, value in usage.items()
    ):
        raise ValueError("usage holds prompt_tokens and completion_tokens, as integers")
    if turn.get("content") is None and not turn.get("tool_calls"):
        raise ValueError("a turn has content or tool_calls (use fail='notext' for neither)")
    calls = []
    for call in turn.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError("a tool call has a name")
        calls.append({"arguments": {}, **call})
    return {**turn, "tool_calls": calls}


def completion(body: dict[str, Any], answer: Answer, number: int) -> dict[str, Any]:
    """The chat.completion object for `answer`, with usage computed from the request and the
    answer unless the turn gave its own, and `content` cut at `max_completion_tokens` (or
    `max_tokens`) with `finish_reason: "length"`."""
    content = answer.content
    calls = [_wire_call(call, number, index) for index, call in enumerate(answer.tool_calls)]
    finish = answer.finish_reason or ("tool_calls" if calls else "stop")
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if isinstance(limit, int) and content is not None and count_tokens(content) > limit:
        content, finish = first_tokens(content, limit), "length"
    produced = count_tokens(content or "") + sum(
        count_tokens(c["function"]["name"]) + count_tokens(c["function"]["arguments"])
        for c in calls
    )
    usage = {"prompt_tokens": prompt_tokens(body), "completion_tokens": produced}
    usage.update(answer.usage or {})
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": usage,
        "system_fingerprint": None,
    }


def _wire_call(call: dict[str, Any], number: int, index: int) -> dict[str, Any]:
    arguments = call.get("arguments", {})
    return {
        "id": str(call.get("id") or f"call_{number}_{index}"),
        "type": "function",
        "function": {
            "name": call["name"],
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def stream_events(completed: dict[str, Any], include_usage: bool) -> str:
    """`completed` sent as server-sent events of `chat.completion.chunk` objects, as the API
    streams: the role, the content a few tokens at a time, each tool call's id and name then
    its arguments in two pieces, the finish reason, the usage when asked, then `[DONE]`."""
    choice = completed["choices"][0]
    message = choice["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": "", "refusal": None}]
    words = TOKEN_RUN.findall(message["content"] or "")
    deltas.extend({"content": "".join(words[i : i + 4])} for i in range(0, len(words), 4))
    for index, call in enumerate(message.get("tool_calls") or []):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        for piece in (arguments[:half], arguments[half:]):
            deltas.append({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    head = {key: completed[key] for key in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    extra = {"usage": None} if include_usage else {}
    chunks = [{**head, "choices": [_chunk_choice(delta, None)], **extra} for delta in deltas]
    chunks.append({**head, "choices": [_chunk_choice({}, choice["finish_reason"])], **extra})
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completed["usage"]})
    return "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"


def _chunk_choice(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
