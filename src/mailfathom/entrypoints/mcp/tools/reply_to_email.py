"""The reply_to_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field

from mailfathom.app.sending import reply_to_email as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.confirmation import (
    ElicitedConfirmation,
    Questions,
    run_confirmed,
)
from mailfathom.entrypoints.mcp.params import (
    ConfirmationLanguage,
    HtmlAlternative,
    IdempotencyKey,
)
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import SendResult
from mailfathom.entrypoints.mcp.tools.outgoing import ASKED, QUEUED, SENDS, UNTRUSTED, send_result


def spec(registry: ToolRegistry, replies: use_case.EmailReply, questions: Questions) -> ToolSpec:
    async def reply_to_email(
        storedEmailId: Annotated[
            str,
            Field(
                description="Required. The email to answer, as a listing, search or read "
                "returned it."
            ),
        ],
        audience: Annotated[
            Literal["senderOnly", "everyone"],
            Field(
                description="Required, no default. senderOnly: whoever asked for answers "
                "(Reply-To, else From). everyone: also the original To and Cc, less every "
                "address this account receives or sends as."
            ),
        ],
        plainTextBody: Annotated[
            str,
            Field(
                description="Required. What you write, placed above the quoted original "
                "(do not paste the original yourself)."
            ),
        ],
        idempotencyKey: IdempotencyKey,
        cc: Annotated[
            list[str] | None,
            Field(description="Addresses to copy in beside those the reply reaches."),
        ] = None,
        htmlBody: HtmlAlternative = None,
        language: ConfirmationLanguage = "en",
        *,
        ctx: Context,  # the SDK finds the context parameter by its bare class
    ) -> Annotated[CallToolResult, SendResult] | InputRequiredResult:
        request = use_case.ReplyRequest(
            stored_email_id=storedEmailId,
            everyone=audience == "everyone",
            plain_text_body=plainTextBody,
            idempotency_key=idempotencyKey,
            cc=cc,
            html_body=htmlBody,
            language=language,
        )
        confirmation = ElicitedConfirmation(ctx, questions)
        return await run_confirmed(
            registry,
            "reply_to_email",
            confirmation,
            lambda caller: send_result(replies.settle(caller, request, confirmation)),
        )

    return ToolSpec(
        name="reply_to_email",
        title="Reply to an email",
        description=(
            "Sends a reply to an email this deployment holds, from the account that "
            "received it. Who it reaches, the subject, the threading headers and the "
            "quoted original are taken from the stored email; you write only your text "
            "and may copy others in. "
            + QUEUED
            + ASKED
            + " It attaches nothing and forwards nothing (forward_email does). "
            + UNTRUSTED
            + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=SENDS,
        function=reply_to_email,
    )
