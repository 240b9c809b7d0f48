"""The save_draft tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.drafting import save_draft as use_case
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.draft_models import DraftResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.drafts import (
    SAVES,
    SHAPES,
    Account,
    AnsweredEmailId,
    AnsweringMode,
    Attachments,
    Bcc,
    Cc,
    Html,
    PlainText,
    Subject,
    To,
    draft_request,
    draft_result,
)
from mailfathom.entrypoints.mcp.tools.outgoing import UNTRUSTED


def spec(registry: ToolRegistry, saving: use_case.DraftSaving) -> ToolSpec:
    async def save_draft(
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
            "save_draft", lambda caller: draft_result(saving.save(caller, request()))
        )

    return ToolSpec(
        name="save_draft",
        title="Save a draft",
        description=(
            "Writes one draft and files a copy in the account's drafts folder on the owner's "
            "own mail server (state filed; held until that copy is in, or for an account "
            "with no drafts folder). Change it with update_draft and the draftId answered; "
            "an identical repeated call answers the same draft rather than writing a second, "
            "and is refused (58001) once that draft was edited."
            + SHAPES
            + " "
            + UNTRUSTED
            + TEXT_FORM
        ),
        category=ToolCategory.DRAFTS,
        permissions=use_case.PERMISSIONS,
        annotations=SAVES,
        function=save_draft,
    )
