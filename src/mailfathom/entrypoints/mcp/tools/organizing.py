"""The organizing tool, registered."""

from __future__ import annotations

from mailfathom.app.organize.organize_email import EmailOrganizer
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import organize_email


def register_organizing_tools(registry: ToolRegistry, organizer: EmailOrganizer) -> None:
    registry.add(organize_email.spec(registry, organizer))
