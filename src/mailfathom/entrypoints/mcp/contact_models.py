"""Published shapes of the contact tools. A name, an address and a note are personal data
about somebody who is not the caller: they appear in a contact the reading grant is served,
and never in a write's refusal, which names an identity at most."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import Published

OriginName = Literal["asserted", "collected"]


class ContactModel(Published):
    contactId: str = Field(description="The book's identifier for the person.")
    displayName: str = Field(description="The person's name as recorded.")
    addresses: list[str] = Field(
        description="Every address the person uses, the preferred one first and the rest in "
        "comparison order, spelt as recorded."
    )
    preferredAddress: str = Field(description="The address to use by default.")
    note: str | None = Field(
        default=None, description="What was recorded about the person; null when nothing."
    )
    origin: OriginName = Field(
        description="asserted: somebody wrote the person down. collected: picked up from "
        "mail that arrived or was sent; promote_contact takes it on."
    )
    recordedAt: datetime = Field(description="When the record was first written.")
    amendedAt: datetime | None = Field(
        default=None, description="When the record was last amended; null if never."
    )


class ListContactsResult(Published):
    contacts: list[ContactModel] = Field(
        description="The page, ordered by the name's comparison form, then by identity."
    )
    nextCursor: str | None = Field(
        default=None,
        description="Pass as cursor for the next page; null when the walk is done. It is not "
        "bound to search or origin.",
    )


class GetContactResult(Published):
    contact: ContactModel | None = Field(
        default=None, description="The person; null when the book holds nobody so named."
    )


_CONTACT = "The record as the book now holds it; only with written."
_HOLDER = (
    "With addressHeldByAnotherContact: the identity of one contact already holding an "
    "address this write claimed. Nothing else of that contact is given."
)


class CreateContactResult(Published):
    state: Literal["written", "addressHeldByAnotherContact"] = Field(
        description="written: the person is recorded. addressHeldByAnotherContact: an "
        "address belongs to somebody the book holds; nothing was written."
    )
    contact: ContactModel | None = Field(default=None, description=_CONTACT)
    addressHolderContactId: str | None = Field(default=None, description=_HOLDER)


class UpdateContactResult(Published):
    state: Literal["written", "notFound", "addressHeldByAnotherContact", "contactWasCollected"] = (
        Field(
            description="written: the record is amended. notFound: no contact of that "
            "identifier. addressHeldByAnotherContact: an address belongs to somebody else. "
            "contactWasCollected: the record was collected from mail; promote_contact first. "
            "Nothing is written on any state but written."
        )
    )
    contact: ContactModel | None = Field(default=None, description=_CONTACT)
    addressHolderContactId: str | None = Field(default=None, description=_HOLDER)


class DeleteContactResult(Published):
    contactId: str = Field(description="The identity the erasure was asked for.")
    wasHeld: bool = Field(description="Whether the book held that contact when it ran.")
    addressesErased: int = Field(description="How many of the person's addresses went.")


class PromoteContactResult(Published):
    state: Literal["written", "notFound", "alreadyAsserted"] = Field(
        description="written: the record is now asserted and amendable. notFound: no "
        "contact of that identifier. alreadyAsserted: nothing was left to do."
    )
