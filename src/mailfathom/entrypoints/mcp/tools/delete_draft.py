"""The delete_draft tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.drafting import delete_draft as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.draft_models import DeleteDraftResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.drafts import DELETES, DraftId


def spec(registry: ToolRegistry, deletion: use_case.DraftDeletion) -> ToolSpec:
    async def delete_draft(draftId: DraftId) -> Annotated[CallToolResult, DeleteDraftResult]:
        def call(caller: Caller) -> DeleteDraftResult:
            deleted = deletion.delete(caller, draftId)
            return DeleteDraftResult(
                draftId=str(deleted.draft_id),
                state=deleted.outcome.value,
            )

        return await registry.run("delete_draft", call)

    return ToolSpec(
        name="delete_draft",
        title="Delete a draft",
        description=(
            "Gives up one draft for good and takes its copy out of the owner's drafts "
            "folder on their mail server; nothing brings it back, and nothing is or was "
            "sent. A draft already sent is refused: cancel_outgoing_email stops its send "
            "while it waits. Asking again is answered as a draft nobody holds." + TEXT_FORM
        ),
        category=ToolCategory.DRAFTS,
        permissions=use_case.PERMISSIONS,
        annotations=DELETES,
        function=delete_draft,
    )
