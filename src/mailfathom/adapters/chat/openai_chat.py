"""`ChatModel` over an OpenAI-compatible `POST /chat/completions` endpoint (OpenAI, and the
servers that speak its protocol: Ollama, llama.cpp, vLLM).

The request is written here with the HTTP client rather than through the `openai` package:
that client reads `OPENAI_*` environment variables (an organization, a project, a base
address, a key) and would send what it finds to whatever endpoint the operator configured,
and it retries on its own, which would spend the question's calls behind the run's back. The
protocol is two JSON shapes, both checked as they are read.

A failure is reported by kind only (`ChatUnavailable`): nothing the endpoint answered, which
can quote the request and so the mail in it, leaves this module. Redirects are not followed.
"""

from __future__ import annotations

import json
import math
import ssl
from collections.abc import Callable, Sequence
from typing import Any

import httpx2

from mailfathom.adapters.http_answers import bounded_body
from mailfathom.app.answering.ports import (
    ChatMessage,
    ChatUnavailable,
    Completion,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)
from mailfathom.domain.answering import ChatEndpoint, ChatFailure

# No chat completion a question needs is larger; a larger body is not read further.
MAX_RESPONSE_OCTETS = 8 * 1024 * 1024
# Usage a provider does not report is estimated at this many characters per token.
CHARACTERS_PER_TOKEN = 4


def _message(message: ChatMessage) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def request_body(
    model: str, messages: Sequence[ChatMessage], tool: ToolDefinition, may_call: bool
) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [_message(m) for m in messages],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            }
        ],
        "tool_choice": "auto" if may_call else "none",
    }


def failure_of_status(status: int) -> ChatFailure:
    """What an HTTP status other than 200 says about the endpoint."""
    if status in (408, 429) or status >= 500:
        return ChatFailure.UNREACHABLE
    return ChatFailure.REFUSED


def _calls(raw: Any) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ChatUnavailable(ChatFailure.NO_TEXT)
    calls = []
    for item in raw:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            raise ChatUnavailable(ChatFailure.NO_TEXT)
        call_id, name, arguments = item.get("id"), function.get("name"), function.get("arguments")
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)):
            raise ChatUnavailable(ChatFailure.NO_TEXT)
        calls.append(ToolCall(call_id, name, arguments))
    return tuple(calls)


def _count(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def completion_of(document: Any, sent_characters: int) -> Completion:
    """The completion a 200 answer carries; `ChatUnavailable(NO_TEXT)` when it is not one."""
    if not isinstance(document, dict):
        raise ChatUnavailable(ChatFailure.NO_TEXT)
    choices = document.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ChatUnavailable(ChatFailure.NO_TEXT)
    text = message.get("content")
    if text is not None and not isinstance(text, str):
        raise ChatUnavailable(ChatFailure.NO_TEXT)
    calls = _calls(message.get("tool_calls"))
    usage = document.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens"))
    if prompt is None:
        prompt = math.ceil(sent_characters / CHARACTERS_PER_TOKEN)
    if completion is None:
        written = len(text or "") + sum(len(c.name) + len(c.arguments) for c in calls)
        completion = math.ceil(written / CHARACTERS_PER_TOKEN)
    return Completion(text, calls, TokenUsage(prompt, completion))


class OpenAiCompatibleChat:
    """One endpoint and model. `api_key` is read when the adapter is made (None: no key is
    sent, as a model served on the same machine may need none). Thread-safe."""

    def __init__(
        self,
        endpoint: ChatEndpoint,
        api_key: str | None,
        *,
        tls_context: Callable[[], ssl.SSLContext] = ssl.create_default_context,
    ) -> None:
        self._model = endpoint.model
        self._url = endpoint.base_url + "/chat/completions"
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx2.Client(
            timeout=endpoint.timeout_seconds,
            verify=tls_context(),
            follow_redirects=False,
            headers=headers,
        )

    def close(self) -> None:
        self._client.close()

    def complete(
        self, messages: Sequence[ChatMessage], tool: ToolDefinition, *, may_call: bool
    ) -> Completion:
        body = json.dumps(
            request_body(self._model, messages, tool, may_call), ensure_ascii=False
        ).encode("utf-8")
        try:
            with self._client.stream(
                "POST", self._url, content=body, headers={"Content-Type": "application/json"}
            ) as response:
                status = response.status_code
                raw = bounded_body(response, MAX_RESPONSE_OCTETS)
        except httpx2.HTTPError:
            raise ChatUnavailable(ChatFailure.UNREACHABLE) from None
        if status != 200:
            raise ChatUnavailable(failure_of_status(status))
        if raw is None:
            raise ChatUnavailable(ChatFailure.NO_TEXT)
        try:
            document = json.loads(raw)
        except ValueError:
            raise ChatUnavailable(ChatFailure.NO_TEXT) from None
        sent = sum(len(m.content or "") for m in messages)
        return completion_of(document, sent)
