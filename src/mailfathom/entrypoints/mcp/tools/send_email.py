"""The send_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field

from mailfathom.app.sending import send_email as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.confirmation import (
    ElicitedConfirmation,
    Questions,
    run_confirmed,
)
from mailfathom.entrypoints.mcp.params import (
    BlindCopiedAddresses,
    ConfirmationLanguage,
    CopiedAddresses,
    HtmlAlternative,
    IdempotencyKey,
)
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import SendResult
from mailfathom.entrypoints.mcp.tools.outgoing import ASKED, QUEUED, SENDS, UNTRUSTED, send_result


def spec(
    registry: ToolRegistry, submission: use_case.AuthoredMailSubmission, questions: Questions
) -> ToolSpec:
    async def send_email(
        account: Annotated[
            str,
            Field(
                description="Required. The account to send as, by accountId or display name "
                "(list_accounts). The message is sent from that account's configured address."
            ),
        ],
        to: Annotated[
            list[str],
            Field(description="Required. Addresses to send to, each a plain address."),
        ],
        subject: Annotated[str, Field(description="Required. The subject line, on one line.")],
        plainTextBody: Annotated[
            str,
            Field(description="Required. The message as plain text, even beside htmlBody."),
        ],
        idempotencyKey: IdempotencyKey,
        cc: CopiedAddresses = None,
        bcc: BlindCopiedAddresses = None,
        htmlBody: HtmlAlternative = None,
        language: ConfirmationLanguage = "en",
        *,
        ctx: Context,  # the SDK finds the context parameter by its bare class
    ) -> Annotated[CallToolResult, SendResult] | InputRequiredResult:
        request = use_case.SendRequest(
            account=account,
            to=to,
            subject=subject,
            plain_text_body=plainTextBody,
            idempotency_key=idempotencyKey,
            cc=cc,
            bcc=bcc,
            html_body=htmlBody,
            language=language,
        )
        confirmation = ElicitedConfirmation(ctx, questions)
        return await run_confirmed(
            registry,
            "send_email",
            confirmation,
            lambda caller: send_result(submission.settle(caller, request, confirmation)),
        )

    return ToolSpec(
        name="send_email",
        title="Send an email",
        description=(
            "Sends a new message from one of this deployment's accounts to the addresses "
            "given. "
            + QUEUED
            + ASKED
            + " It attaches nothing, replies to and forwards nothing (reply_to_email and "
            "forward_email do), schedules nothing, and is not a mailing list: the "
            "recipient count is bounded. Recipients are plain addresses. " + UNTRUSTED + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=SENDS,
        function=send_email,
    )
