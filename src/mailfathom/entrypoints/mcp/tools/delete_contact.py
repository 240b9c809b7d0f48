"""The delete_contact tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.contacts import delete_contact as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import DeleteContactResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import ERASES, ContactId


def spec(registry: ToolRegistry, erasure: use_case.ContactErasure) -> ToolSpec:
    async def delete_contact(
        contactId: ContactId,
    ) -> Annotated[CallToolResult, DeleteContactResult]:
        def call(caller: Caller) -> DeleteContactResult:
            erased = erasure.delete(caller, contactId)
            return DeleteContactResult(
                contactId=str(erased.contact_id),
                wasHeld=erased.was_held,
                addressesErased=erased.addresses_erased,
            )

        return await registry.run("delete_contact", call)

    return ToolSpec(
        name="delete_contact",
        title="Delete contact",
        description=(
            "Erases one person from the contact book with every address recorded for them; "
            "nothing of the record is kept and nothing brings it back. No mail is deleted "
            "and no mail server is contacted. Erasing somebody not held answers wasHeld "
            "false. Read the person with get_contact first if you need to be sure who it is."
            + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=ERASES,
        function=delete_contact,
    )
