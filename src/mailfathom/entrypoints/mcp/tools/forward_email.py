"""The forward_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import Field

from mailfathom.app.sending import forward_email as use_case
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


def spec(registry: ToolRegistry, forwards: use_case.EmailForward, questions: Questions) -> ToolSpec:
    async def forward_email(
        storedEmailId: Annotated[
            str,
            Field(
                description="Required. The email to forward, as a listing, search or read "
                "returned it."
            ),
        ],
        to: Annotated[
            list[str],
            Field(description="Required. Addresses to forward to, each a plain address."),
        ],
        plainTextBody: Annotated[
            str,
            Field(description="Required. What you write, placed above the forwarded email."),
        ],
        idempotencyKey: IdempotencyKey,
        cc: CopiedAddresses = None,
        bcc: BlindCopiedAddresses = None,
        htmlBody: HtmlAlternative = None,
        language: ConfirmationLanguage = "en",
        *,
        ctx: Context,  # the SDK finds the context parameter by its bare class
    ) -> Annotated[CallToolResult, SendResult] | InputRequiredResult:
        request = use_case.ForwardRequest(
            stored_email_id=storedEmailId,
            to=to,
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
            "forward_email",
            confirmation,
            lambda caller: send_result(forwards.settle(caller, request, confirmation)),
        )

    return ToolSpec(
        name="forward_email",
        title="Forward an email",
        description=(
            "Sends an email this deployment holds on to the addresses you give, with your "
            "text above it and the original's files attached (within the deployment's "
            "attachment limits). The subject and the forwarded text are taken from the "
            "stored email. " + QUEUED + ASKED + " " + UNTRUSTED + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=SENDS,
        function=forward_email,
    )
