"""The six contact tools, registered together: two read the book, four write it."""

from __future__ import annotations

from mailfathom.bootstrap import ContactUseCases
from mailfathom.entrypoints.mcp.registry import ToolRegistry
from mailfathom.entrypoints.mcp.tools import (
    create_contact,
    delete_contact,
    get_contact,
    list_contacts,
    promote_contact,
    update_contact,
)


def register_contact_tools(registry: ToolRegistry, services: ContactUseCases) -> None:
    registry.add(list_contacts.spec(registry, services.listing))
    registry.add(get_contact.spec(registry, services.lookup))
    registry.add(create_contact.spec(registry, services.creation))
    registry.add(update_contact.spec(registry, services.amendment))
    registry.add(delete_contact.spec(registry, services.erasure))
    registry.add(promote_contact.spec(registry, services.promotion))
