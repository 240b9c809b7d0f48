"""The answering tool, registered."""

from __future__ import annotations

from mailfathom.app.answering.ask_mail import MailboxQuestionReader
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import ask_mail


def register_answering_tools(registry: ToolRegistry, reader: MailboxQuestionReader) -> None:
    registry.add(ask_mail.spec(registry, reader))
