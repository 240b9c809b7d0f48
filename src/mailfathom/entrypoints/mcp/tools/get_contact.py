"""The get_contact tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from mailfathom.app.contacts import get_contact as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import GetContactResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import PERSONAL, READS_THE_BOOK, contact_model
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, lookup: use_case.ContactLookup) -> ToolSpec:
    async def get_contact(
        contactId: Annotated[
            str | None,
            Field(
                description="The contactId a listing or a write answered with. Not with address."
            ),
        ] = None,
        address: Annotated[
            str | None,
            Field(
                description="Any address the person uses, the address alone (anna@example.org, "
                "not a header with a name), any case. Not with contactId."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, GetContactResult]:
        def call(caller: Caller) -> GetContactResult:
            found = lookup.get(caller, contactId, address)
            return GetContactResult(contact=contact_model(found) if found else None)

        return await registry.run("get_contact", call)

    return ToolSpec(
        name="get_contact",
        title="Get contact",
        description=(
            "Returns one person, named by exactly one of contactId or an address they use: "
            "who is this mail from? Answers contact null when the book holds nobody so "
            "named." + PERSONAL + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=READS_THE_BOOK,
        function=get_contact,
    )
