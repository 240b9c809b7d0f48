"""The update_draft tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.drafting import update_draft as use_case
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.draft_models import DraftResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.drafts import (
    EDITS,
    SHAPES,
    Account,
    AnsweredEmailId,
    AnsweringMode,
    Attachments,
    Bcc,
    Cc,
    DraftId,
    Html,
    PlainText,
    Subject,
    To,
    draft_request,
    draft_result,
)
from mailfathom.entrypoints.mcp.tools.outgoing import UNTRUSTED


def spec(registry: ToolRegistry, editing: use_case.DraftEditing) -> ToolSpec:
    async def update_draft(
        draftId: DraftId,
        plainTextBody: PlainText,
        account: Account = None,
        subject: Subject = None,
        to: To = None,
        cc: Cc = None,
        bcc: Bcc = None,
        htmlBody: Html = None,
        answeredEmailId: AnsweredEmailId = None,
        answering: AnsweringMode = None,
        attachments: Attachments = None,
    ) -> Annotated[CallToolResult, DraftResult]:
        def request() -> DraftRequest:
            return draft_request(
                plainTextBody,
                account,
                subject,
                to,
                cc,
                bcc,
                htmlBody,
                answeredEmailId,
                answering,
                attachments,
            )

        return await registry.run(
            "update_draft", lambda caller: draft_result(editing.update(caller, draftId, request()))
        )

    return ToolSpec(
        name="update_draft",
        title="Edit a draft",
        description=(
            "Replaces the whole message of a draft, on the owner's own mail server too: "
            "state it entirely, since a recipient, "
            "body or htmlBody left out is gone. The draftId stays, the revision goes up by "
            "one, and the drafts folder ends up showing one copy (the new one is appended "
            "before the old one is taken out). An answer is derived again from the email it "
            "names; the account must stay the draft's own." + SHAPES + " " + UNTRUSTED + TEXT_FORM
        ),
        category=ToolCategory.DRAFTS,
        permissions=use_case.PERMISSIONS,
        annotations=EDITS,
        function=update_draft,
    )
