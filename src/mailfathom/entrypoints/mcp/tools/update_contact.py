"""The update_contact tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.contacts import update_contact as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import UpdateContactResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import (
    AMENDS,
    PERSONAL,
    Addresses,
    ContactId,
    DisplayName,
    Note,
    PreferredAddress,
    written_parts,
)
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, amendment: use_case.ContactAmendment) -> ToolSpec:
    async def update_contact(
        contactId: ContactId,
        displayName: DisplayName,
        addresses: Addresses,
        preferredAddress: PreferredAddress,
        note: Note = None,
    ) -> Annotated[CallToolResult, UpdateContactResult]:
        def call(caller: Caller) -> UpdateContactResult:
            write = amendment.update(
                caller, contactId, displayName, addresses, preferredAddress, note
            )
            contact, holder = written_parts(write)
            return UpdateContactResult(
                state=write.state.value,  # type: ignore[arg-type]
                contact=contact,
                addressHolderContactId=holder,
            )

        return await registry.run("update_contact", call)

    return ToolSpec(
        name="update_contact",
        title="Update contact",
        description=(
            "Amends one asserted contact to the whole record you state: the name, every "
            "address, the preferred one and the note. An address you leave out is removed "
            "and an omitted note is cleared, so read the contact with get_contact first and "
            "send it back changed. A collected record answers contactWasCollected: "
            "promote_contact takes it on first." + PERSONAL + MAIL_CONTENT_IS_DATA + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=AMENDS,
        function=update_contact,
    )
