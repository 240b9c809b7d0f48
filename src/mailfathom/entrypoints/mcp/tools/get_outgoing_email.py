"""The get_outgoing_email tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.sending import get_outgoing_email as use_case
from mailfathom.domain.access import ToolCategory
from mailfathom.entrypoints.mcp.params import Identifier
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.send_models import OutgoingStatusResult
from mailfathom.entrypoints.mcp.tools.outgoing import READS_A_SEND, status_result
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, reader: use_case.OutgoingMailReader) -> ToolSpec:
    async def get_outgoing_email(
        outgoingEmailId: Identifier,
    ) -> Annotated[CallToolResult, OutgoingStatusResult]:
        return await registry.run(
            "get_outgoing_email",
            lambda caller: status_result(reader.read(caller, outgoingEmailId)),
        )

    return ToolSpec(
        name="get_outgoing_email",
        title="Check a queued send",
        description=(
            "Reports what became of one message you queued with a sending tool: its "
            "state, attempts, each recipient's state and last SMTP reply code, and the "
            "failure code of the last failed attempt. Reads the record only; no mail "
            "server is asked. It cannot list sends." + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.SENDING,
        permissions=use_case.PERMISSIONS,
        annotations=READS_A_SEND,
        function=get_outgoing_email,
    )
