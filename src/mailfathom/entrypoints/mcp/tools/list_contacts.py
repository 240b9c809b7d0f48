"""The list_contacts tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field, WithJsonSchema

from mailfathom.app.contacts import list_contacts as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import ListContactsResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import PERSONAL, READS_THE_BOOK, contact_model
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA

# Published as the enumeration it is, and bound as any text: another value reaches the use
# case, which refuses it as the contract says (51009), not while binding.
_ORIGIN = WithJsonSchema({"type": "string", "enum": ["asserted", "collected"]})


def spec(registry: ToolRegistry, listing: use_case.ContactListing) -> ToolSpec:
    async def list_contacts(
        search: Annotated[
            str | None,
            Field(
                description="Text the name or one of the addresses must contain, any case, at "
                "most 320 characters; wildcard characters match themselves. Omitted or "
                "empty: the whole book."
            ),
        ] = None,
        origin: Annotated[
            Annotated[str, _ORIGIN] | None,
            Field(description="asserted or collected: one half of the book. Omitted: both."),
        ] = None,
        pageSize: Annotated[
            int | None,
            Field(description="People per page, 1 to 200. Omitted: 50. Never clamped."),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="The nextCursor of a previous call. Omitted: the first page."),
        ] = None,
    ) -> Annotated[CallToolResult, ListContactsResult]:
        def call(caller: Caller) -> ListContactsResult:
            page = listing.list(caller, search, origin, pageSize, cursor)
            return ListContactsResult(
                contacts=[contact_model(c) for c in page.contacts], nextCursor=page.next_cursor
            )

        return await registry.run("list_contacts", call)

    return ToolSpec(
        name="list_contacts",
        title="List contacts",
        description=(
            "Returns one page of the contact book, ordered by name, each person with every "
            "address they use, which is preferred, the note, and whether somebody wrote them "
            "down (asserted) or this deployment picked them up from mail (collected). Local "
            "accounts of this deployment are listed as asserted contacts, so a colleague "
            "account is found here. To resolve one address to its person, use get_contact."
            + PERSONAL
            + MAIL_CONTENT_IS_DATA
            + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=READS_THE_BOOK,
        function=list_contacts,
    )
