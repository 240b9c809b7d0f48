"""Reading what ask_mail and the model provider answered, and scripting a lookup, for the
tests that reach a served deployment over HTTP."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from answering.served import Served
from waiting import wait_for

QUESTION = "What did the landlord say about the leak?"


def message_text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def error_code(result: CallToolResult) -> int | None:
    if not result.is_error:
        return None
    text = message_text(result)
    assert text.startswith("MailFathom error "), text
    return int(text[len("MailFathom error ") :][:5])


def answer_of(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, message_text(result)
    structured: dict[str, Any] | None = result.structured_content
    assert structured is not None
    return structured


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def lookup(**arguments: Any) -> dict[str, Any]:
    """A scripted turn asking for one lookup with `arguments`."""
    return {"tool_calls": [{"name": "search_mail", "arguments": arguments}]}


def search_modes(served: Served) -> tuple[str, str]:
    """`retrievalMode` and `semanticSearch` of a search: the search asks a provider that
    failed before once its window has passed."""
    found = served.search("leak")
    return found["retrievalMode"], found["semanticSearch"]


def wait_until_offered(served: Served) -> None:
    """Search until the search is hybrid again and ask_mail is listed."""
    wait_for(
        lambda: search_modes(served) == ("hybrid", "available") and "ask_mail" in served.tools(),
        "ask_mail offered",
        timeout=30,
        interval=0.2,
    )
