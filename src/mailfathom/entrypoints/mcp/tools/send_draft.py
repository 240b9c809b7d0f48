"""The send_draft tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field

from mailfathom.app.drafting import send_draft as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.confirmation import (
    ElicitedConfirmation,
    Questions,
    run_confirmed,
)
from mailfathom.entrypoints.mcp.params import ConfirmationLanguage
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import SendResult
from mailfathom.entrypoints.mcp.tools.drafts import DraftId
from mailfathom.entrypoints.mcp.tools.outgoing import ASKED, QUEUED, SENDS, UNTRUSTED, send_result

SendAfter = Annotated[
    str | None,
    Field(
        description="An ISO 8601 instant with its offset (Z, +HH:MM or -HH:MM), at most 30 days "
        "ahead, before which the message is not handed to a mail server; it can be "
        "cancelled until then. An instant already past sends as soon as possible. Omitted: "
        "as soon as possible.",
        json_schema_extra={"format": "date-time"},
    ),
]


def spec(
    registry: ToolRegistry, promotion: use_case.DraftPromotion, questions: Questions
) -> ToolSpec:
    async def send_draft(
        draftId: DraftId,
        language: ConfirmationLanguage = "en",
        sendAfter: SendAfter = None,
        *,
        ctx: Context,  # the SDK finds the context parameter by its bare class
    ) -> Annotated[CallToolResult, SendResult] | InputRequiredResult:
        confirmation = ElicitedConfirmation(ctx, questions)
        return await run_confirmed(
            registry,
            "send_draft",
            confirmation,
            lambda caller: send_result(
                promotion.settle(caller, draftId, confirmation, language, sendAfter)
            ),
        )

    return ToolSpec(
        name="send_draft",
        title="Send a draft",
        description=(
            "Sends the message one draft holds, exactly as it stands: nothing can be changed "
            "here (update_draft first). Every sending bound is asked now, and a draft "
            "addressed to nobody is refused. sendAfter holds it until an instant. Asking "
            "again answers the first call's record unchanged, whatever sendAfter it names, "
            "and sends nothing more. The draft's copy leaves the drafts folder once the "
            "message has been delivered. " + QUEUED + ASKED + " " + UNTRUSTED + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=SENDS,
        function=send_draft,
    )
