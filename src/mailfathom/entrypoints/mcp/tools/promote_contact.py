"""The promote_contact tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.contacts import promote_contact as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import PromoteContactResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import PROMOTES, ContactId


def spec(registry: ToolRegistry, promotion: use_case.ContactPromotion) -> ToolSpec:
    async def promote_contact(
        contactId: ContactId,
    ) -> Annotated[CallToolResult, PromoteContactResult]:
        def call(caller: Caller) -> PromoteContactResult:
            state = promotion.promote(caller, contactId)
            return PromoteContactResult(state=state.value)  # type: ignore[arg-type]

        return await registry.run("promote_contact", call)

    return ToolSpec(
        name="promote_contact",
        title="Promote contact",
        description=(
            "Takes on one person this deployment collected from mail, so the record becomes "
            "asserted and update_contact can amend it. One way only; nothing about the "
            "person is rewritten, and the answer is the state alone (read the person with "
            "get_contact). No mail server is contacted." + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=PROMOTES,
        function=promote_contact,
    )
