"""The create_contact tool: its descriptor, and the call of its use case."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult

from mailfathom.app.contacts import create_contact as use_case
from mailfathom.domain.access import Caller, ToolCategory
from mailfathom.entrypoints.mcp.contact_models import CreateContactResult
from mailfathom.entrypoints.mcp.registry import ToolRegistry, ToolSpec
from mailfathom.entrypoints.mcp.result_text import TEXT_FORM
from mailfathom.entrypoints.mcp.tools.contacts import (
    CREATES,
    PERSONAL,
    Addresses,
    DisplayName,
    Note,
    PreferredAddress,
    written_parts,
)
from mailfathom.entrypoints.mcp.untrusted import MAIL_CONTENT_IS_DATA


def spec(registry: ToolRegistry, creation: use_case.ContactCreation) -> ToolSpec:
    async def create_contact(
        displayName: DisplayName,
        addresses: Addresses,
        preferredAddress: PreferredAddress,
        note: Note = None,
    ) -> Annotated[CallToolResult, CreateContactResult]:
        def call(caller: Caller) -> CreateContactResult:
            write = creation.create(caller, displayName, addresses, preferredAddress, note)
            contact, holder = written_parts(write)
            return CreateContactResult(
                state="written" if contact is not None else "addressHeldByAnotherContact",
                contact=contact,
                addressHolderContactId=holder,
            )

        return await registry.run("create_contact", call)

    return ToolSpec(
        name="create_contact",
        title="Create contact",
        description=(
            "Records a person the book does not hold yet, as asserted, and returns the "
            "record. An address somebody in the book already uses is answered "
            "addressHeldByAnotherContact with that contact's identity, and nothing is "
            "written: calling twice with one person records them once."
            + PERSONAL
            + MAIL_CONTENT_IS_DATA
            + TEXT_FORM
        ),
        category=ToolCategory.CONTACTS,
        permissions=use_case.PERMISSIONS,
        annotations=CREATES,
        function=create_contact,
    )
