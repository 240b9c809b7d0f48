"""The assistant of the test model provider: what it answers to a chat-completions request.

A test scripts the next answers turn by turn; once the script is spent the chat mode answers:

- `echo` (the start mode): the text of every tool result it received, joined by newlines, or
  the last user message when there is none, so a test sees what mail text reached the model;
- `obedient`: a model that does what the text it reads tells it. It reads the user messages
  and the tool results (raw, and with JSON strings and HTML entities decoded, as a model reads
  through an envelope) for `call <tool> with {json}`, `call <tool_name>`,
  `search account|folder|mailbox X [for words]` (a call of the lookup tool: the first offered
  tool named like search, lookup or find, else the first offered) and
  `reply|answer|respond with "text"`; it asks for every call it has not asked for yet in this
  conversation at once, else says the reply it was told to, else answers as `echo` does;
- `runaway`: asks for another call of the lookup tool at every turn, with new arguments each
  time (`{"query": "more N"}` over the mode's `arguments`).

Generated answers honour `tool_choice: "none"` (no tool call, as the API guarantees); scripted
turns are the test's word and are answered as written.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterator
from typing import Any

from .model_provider_text import content_text
from .model_provider_wire import Answer

MODES = ("echo", "obedient", "runaway")
CALL = re.compile(r"\bcall\s+(?:the\s+)?(?:tool\s+)?[`'\"]?([A-Za-z_][\w.\-]*)[`'\"]?", re.I)
WITH = re.compile(r"\s*(?:with|using)?\s*(?:arguments\s*)?:?\s*", re.I)
SEARCH = re.compile(
    r"\bsearch\s+(?:the\s+)?(account|folder|mailbox)\s+[`'\"]?([^\s`'\",;<>]+)"
    r"(?:\s+for\s+[`'\"\u201c]?([^`'\"\u201d\n.,;<>]+))?",
    re.I,
)
REPLY = re.compile(
    r"\b(?:reply|answer|respond)\s+(?:only\s+)?with\s+[\"\u201c](.+?)[\"\u201d]", re.I
)
SEARCH_KEYS = {"account": "account", "mailbox": "account", "folder": "folder"}
LOOKUP_HINTS = ("search", "lookup", "find")


class ConversationError(ValueError):
    """A request the chat-completions API refuses with 400 (`param` names the culprit)."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def check_request(body: dict[str, Any]) -> None:
    """Refuse what the API refuses: no model or messages, a `tool` message answering no call,
    a call left without its `tool` answer, a `tool_choice` without `tools` or naming none."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise ConversationError("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ConversationError("Missing required parameter: 'messages'.", "messages")
    pending: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in (
            "system", "developer", "user", "assistant", "tool"
        ):  # fmt: skip
            raise ConversationError(
                f"Invalid value for 'messages[{index}].role'.", f"messages.[{index}].role"
            )
        role = message["role"]
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                raise ConversationError(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{index}].role",
                )
            pending.remove(call_id)
            continue
        if pending:
            raise ConversationError(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(pending)}",
                f"messages.[{index}].role",
            )
        if role == "assistant":
            pending = _call_ids(message.get("tool_calls") or [], index)
    if pending:
        raise ConversationError(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(pending)}",
            f"messages.[{len(messages) - 1}].role",
        )
    _check_tools(body.get("tools"))
    choice = body.get("tool_choice")
    names = offered_tools(body)
    if choice is not None and not body.get("tools"):
        raise ConversationError(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified.",
            "tool_choice",
        )
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name not in names:
            raise ConversationError(
                f"Invalid value for 'tool_choice': no function named '{name}' was specified "
                "in the 'tools' parameter.",
                "tool_choice",
            )
    elif choice not in (None, "none", "auto", "required"):
        raise ConversationError("Invalid value for 'tool_choice'.", "tool_choice")


def _call_ids(calls: Any, index: int) -> list[str]:
    where = f"messages.[{index}].tool_calls"
    if not isinstance(calls, list):
        raise ConversationError(f"Invalid type for '{where}': expected an array.", where)
    ids: list[str] = []
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(function, dict)
            or not isinstance(call.get("id"), str)
            or call.get("type") != "function"
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments"), str)
        ):
            raise ConversationError(
                f"Invalid value for '{where}[{number}]': a call has an id, type 'function' "
                "and a function with a name and arguments as a string.",
                f"{where}.[{number}]",
            )
        ids.append(call["id"])
    return ids


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise ConversationError("Invalid type for 'tools': expected an array.", "tools")
    for number, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if (
            not isinstance(function, dict)
            or tool.get("type") != "function"
            or not isinstance(function.get("name"), str)
        ):
            raise ConversationError(
                f"Missing required parameter: 'tools[{number}].function'.",
                f"tools.[{number}].function",
            )


def offered_tools(body: dict[str, Any]) -> list[str]:
    return [
        str((tool.get("function") or {}).get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
    ]


def lookup_tool(body: dict[str, Any]) -> str:
    names = offered_tools(body)
    for name in names:
        if any(hint in name.lower() for hint in LOOKUP_HINTS):
            return name
    return names[0] if names else "search"


def answer_mode(mode: str, options: dict[str, Any], body: dict[str, Any]) -> Answer:
    tools_allowed = bool(body.get("tools")) and body.get("tool_choice") != "none"
    if mode == "runaway" and tools_allowed:
        asked = sum(len(m.get("tool_calls") or []) for m in _messages(body, "assistant"))
        arguments = {"query": f"more {asked + 1}", **(options.get("arguments") or {})}
        return Answer(None, [{"name": lookup_tool(body), "arguments": arguments}])
    if mode == "obedient":
        calls, reply = _instructions(body)
        done = _asked(body)
        fresh = [c for c in calls if _key(c["name"], c["arguments"]) not in done]
        if fresh and tools_allowed:
            return Answer(None, fresh)
        if reply is not None:
            return Answer(reply, [])
    return Answer(_echo(body), [])


def _messages(body: dict[str, Any], role: str) -> Iterator[dict[str, Any]]:
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == role:
            yield message


def _echo(body: dict[str, Any]) -> str:
    results = [content_text(m.get("content")) for m in _messages(body, "tool")]
    if results:
        return "\n".join(results)
    users = [content_text(m.get("content")) for m in _messages(body, "user")]
    return users[-1] if users else ""


def _key(name: str, arguments: Any) -> str:
    return name + "\0" + json.dumps(arguments, sort_keys=True)


def _asked(body: dict[str, Any]) -> set[str]:
    asked: set[str] = set()
    for message in _messages(body, "assistant"):
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            raw = function.get("arguments", "")
            try:
                arguments = json.loads(raw)
            except (TypeError, ValueError):
                arguments = raw
            asked.add(_key(str(function.get("name")), arguments))
    return asked


def _readings(content: Any) -> Iterator[str]:
    """A text as a model reads it, most decoded first: every string inside it when it is
    JSON, the text with HTML entities decoded, the text as sent."""
    text = content_text(content)
    seen: set[str] = set()
    queue: list[str] = []
    with contextlib.suppress(ValueError):
        queue.extend(_strings(json.loads(text)))
    queue.extend([html.unescape(text), text])
    for item in queue:
        for reading in (item, html.unescape(item)):
            if reading not in seen:
                seen.add(reading)
                yield reading


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _instructions(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The calls the text read asks for, in order and without repeats, and the last reply
    it asks for."""
    offered = set(offered_tools(body))
    lookup = lookup_tool(body)
    calls: list[dict[str, Any]] = []
    keys: set[str] = set()
    reply: str | None = None
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") not in ("user", "tool"):
            continue
        for text in _readings(message.get("content")):
            for name, arguments in _calls_in(text, offered, lookup):
                key = _key(name, arguments)
                if key not in keys:
                    keys.add(key)
                    calls.append({"name": name, "arguments": arguments})
            for match in REPLY.finditer(text):
                reply = match.group(1)
    return calls, reply


def _calls_in(text: str, offered: set[str], lookup: str) -> list[tuple[str, Any]]:
    """The calls `text` asks for, in the order it asks for them."""
    found: list[tuple[int, str, Any]] = []
    for match in CALL.finditer(text):
        name = match.group(1).rstrip(".-")
        rest = WITH.match(text, match.end())
        start = rest.end() if rest else match.end()
        if text.startswith("{", start):
            # Arguments that do not parse in this reading parse in a decoded one.
            arguments = _object_at(text, start)
            if arguments is not None:
                found.append((match.start(), name, arguments))
        elif name in offered or "_" in name:
            found.append((match.start(), name, {}))
    for match in SEARCH.finditer(text):
        search = {SEARCH_KEYS[match.group(1).lower()]: match.group(2).rstrip(".:!?`'\"")}
        if match.group(3):
            search["query"] = match.group(3).strip()
        found.append((match.start(), lookup, search))
    return [(name, arguments) for _, name, arguments in sorted(found, key=lambda f: f[0])]


def _object_at(text: str, start: int) -> dict[str, Any] | None:
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
