"""The four drafting tools, registered together. send_draft is a send: it is published in
the sending category and needs the sending grant, the other three the drafting grant."""

from __future__ import annotations

from mailfathom.bootstrap import DraftingUseCases
from mailfathom.entrypoints.mcp.confirmation import Questions
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import delete_draft, save_draft, send_draft, update_draft


def register_drafting_tools(
    registry: ToolRegistry, services: DraftingUseCases, questions: Questions
) -> None:
    """`questions`: what the questions a person is asked before send_draft are allowed."""
    registry.add(save_draft.spec(registry, services.save))
    registry.add(update_draft.spec(registry, services.update))
    registry.add(delete_draft.spec(registry, services.delete))
    registry.add(send_draft.spec(registry, services.send, questions))
