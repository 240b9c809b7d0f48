"""Each contact use case asks for its own permission, whatever entrypoint reached it, and
the endpoint answers a use case's refusal as 54001: a use case does not know what a protocol
calls an unknown tool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from fakes.contacts import InMemoryContactBook
from mailfathom.adapters.cursor_signing import HmacCursorSigner
from mailfathom.app.contacts.create_contact import ContactCreation
from mailfathom.app.contacts.delete_contact import ContactErasure
from mailfathom.app.contacts.get_contact import ContactLookup
from mailfathom.app.contacts.list_contacts import ContactListing
from mailfathom.app.contacts.promote_contact import ContactPromotion
from mailfathom.app.contacts.update_contact import ContactAmendment
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import PermissionDenied
from mailfathom.entrypoints.mcp.registry import ToolRegistry, current_caller, outcome_code

ID = "6f1c1d8e-5d55-4a55-9b33-1f1e3a4b5c6d"
READ = frozenset({Permission.CONTACTS_READ})
WRITE = frozenset({Permission.CONTACTS_WRITE})


def _calls() -> dict[str, tuple[frozenset[Permission], Any]]:
    """Each use case over one in-memory book: what is tested is the use case's own check,
    which comes before the book is reached (the book's contract is run elsewhere)."""
    book = InMemoryContactBook()
    signer = HmacCursorSigner(b"k" * 32)
    record = ("Name", ["a@example.org"], "a@example.org", None)
    calls: dict[str, tuple[frozenset[Permission], Callable[[Caller], object]]] = {
        "list_contacts": (READ, lambda c: ContactListing(book, signer).list(c)),
        "get_contact": (READ, lambda c: ContactLookup(book).get(c, ID, None)),
        "create_contact": (WRITE, lambda c: ContactCreation(book).create(c, *record)),
        "update_contact": (WRITE, lambda c: ContactAmendment(book).update(c, ID, *record)),
        "delete_contact": (WRITE, lambda c: ContactErasure(book).delete(c, ID)),
        "promote_contact": (WRITE, lambda c: ContactPromotion(book).promote(c, ID)),
    }
    return calls


@pytest.mark.parametrize(
    "tool",
    [
        "list_contacts",
        "get_contact",
        "create_contact",
        "update_contact",
        "delete_contact",
        "promote_contact",
    ],
)
def test_each_use_case_checks_its_own_permission(tool: str) -> None:
    needs, run = _calls()[tool]
    others = frozenset(Permission) - needs
    with pytest.raises(PermissionDenied):
        run(Caller(permissions=others, label="other"))
    run(Caller(permissions=needs, label="holder"))

    registry = ToolRegistry()

    async def through_the_endpoint() -> object:
        token = current_caller.set(Caller(permissions=others, label="other"))
        try:
            return await registry.run(tool, run)
        finally:
            current_caller.reset(token)

    assert outcome_code(asyncio.run(through_the_endpoint())) == Code.UNDIAGNOSED
