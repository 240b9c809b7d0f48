"""The cancel_outgoing_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.sending import cancel_outgoing_email as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.params import Identifier
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import OutgoingStatusResult
from mailfathom.entrypoints.mcp.tools.outgoing import WITHDRAWS, status_result
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, cancellation: use_case.OutgoingMailCancellation) -> ToolSpec:
    async def cancel_outgoing_email(
        outgoingEmailId: Identifier,
    ) -> Annotated[CallToolResult, OutgoingStatusResult]:
        return await registry.run(
            "cancel_outgoing_email",
            lambda caller: status_result(cancellation.cancel(caller, outgoingEmailId)),
        )

    return ToolSpec(
        name="cancel_outgoing_email",
        title="Withdraw a queued send",
        description=(
            "Stops a message you queued from being sent while it is still waiting. It "
            "cannot recall a message that has been transmitted: a send being transmitted, "
            "transmitted, or given up on is refused and nothing is withdrawn. A withdrawn "
            "send is gone for good; to send it after all, queue it again with a new "
            "idempotencyKey. Withdrawing reaches no mail server." + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=WITHDRAWS,
        function=cancel_outgoing_email,
    )
