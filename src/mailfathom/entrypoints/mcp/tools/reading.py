"""The four mailbox reading tools, registered together.

Each tool's descriptor and the call of its use case live in the module named like the tool;
every bound and every refusal belongs to the use case behind it.
"""

from __future__ import annotations

from mailfathom.bootstrap import ReadingUseCases
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import (
    get_email_content,
    list_accounts,
    list_emails,
    search_emails,
)


def register_reading_tools(registry: ToolRegistry, services: ReadingUseCases) -> None:
    registry.add(list_accounts.spec(registry, services.accounts))
    registry.add(list_emails.spec(registry, services.timeline))
    registry.add(get_email_content.spec(registry, services.content))
    registry.add(search_emails.spec(registry, services.search))
