"""The send_draft tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.drafting import send_draft as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import SendResult
from mailfathom.entrypoints.mcp.tools.drafts import DraftId
from mailfathom.entrypoints.mcp.tools.outgoing import QUEUED, SENDS, UNTRUSTED, queued_result


def spec(registry: ToolRegistry, promotion: use_case.DraftPromotion) -> ToolSpec:
    async def send_draft(draftId: DraftId) -> Annotated[CallToolResult, SendResult]:
        return await registry.run(
            "send_draft", lambda caller: queued_result(promotion.send(caller, draftId))
        )

    return ToolSpec(
        name="send_draft",
        title="Send a draft",
        description=(
            "Sends the message one draft holds, exactly as it stands: nothing can be changed "
            "here (update_draft first). Every sending bound is asked now, and a draft "
            "addressed to nobody is refused. Asking again answers the first call's record "
            "and sends nothing more. The draft's copy leaves the drafts folder once the "
            "message has been delivered. " + QUEUED + " " + UNTRUSTED + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=SENDS,
        function=send_draft,
    )
