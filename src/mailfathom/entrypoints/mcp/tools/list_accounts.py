"""The list_accounts tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.reading import list_accounts as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp import mapping
from mailfathom.entrypoints.mcp.models import ListAccountsResult
from mailfathom.entrypoints.mcp.registry import READ_ONLY, ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM


def spec(registry: ToolRegistry, reader: use_case.AccountDirectoryReader) -> ToolSpec:
    async def list_accounts() -> Annotated[CallToolResult, ListAccountsResult]:
        return await registry.run(
            "list_accounts", lambda caller: mapping.accounts(reader.read(caller))
        )

    return ToolSpec(
        name="list_accounts",
        title="List accounts",
        description=(
            "Lists the mail accounts this deployment serves, with the names a request "
            "may use for each and how current the local copy of each readable folder is. "
            "Reads local state only; no mail server is contacted. Takes no arguments." + TEXT_FORM
        ),
        category=ToolCategory.MAILBOX,
        permissions=use_case.PERMISSIONS,
        annotations=READ_ONLY,
        function=list_accounts,
    )
