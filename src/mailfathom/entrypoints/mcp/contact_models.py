"""Published shapes of the contact tools. A name, an address and a note are personal data
about somebody who is not the caller: they appear in a contact the reading grant is served,
and never in a write's refusal, which names an identity at most."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import CarriesMailContent, Published
from mailfathom.entrypoints.mcp.untrusted import OwnText, mail_content

OriginName = Literal["asserted", "collected"]


class ContactModel(Published):
    contactId: OwnText = Field(description="The book's identifier for the person.")
    displayName: str = mail_content(description="The person's name as recorded.")
    addresses: list[str] = mail_content(
        description="Every address the person uses, the preferred one first and the rest in "
        "comparison order, spelt as recorded."
    )
    preferredAddress: str = mail_content(description="The address to use by default.")
    note: str | None = mail_content(
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


class ListContactsResult(CarriesMailContent):
    contacts: list[ContactModel] = Field(
        description="The page, ordered by the name's comparison form, then by identity."
    )
    nextCursor: OwnText | None = Field(
        default=None,
        description="Pass as cursor for the next page; null when the walk is done. It is not "
        "bound to search or origin.",
    )


class GetContactResult(CarriesMailContent):
    contact: ContactModel | None = Field(
        default=None, description="The person; null when the book holds nobody so named."
    )


_CONTACT = "The record as the book now holds it; only with written."
_HOLDER = (
    "With addressHeldByAnotherContact: the identity of one contact already holding an "
    "address this write claimed. Nothing else of that contact is given."
)


class CreateContactResult(CarriesMailContent):
    state: Literal["written", "addressHeldByAnotherContact"] = Field(
        description="written: the person is recorded. addressHeldByAnotherContact: an "
        "address belongs to somebody the book holds; nothing was written."
    )
    contact: ContactModel | None = Field(default=None, description=_CONTACT)
    addressHolderContactId: OwnText | None = Field(default=None, description=_HOLDER)


class UpdateContactResult(CarriesMailContent):
    state: Literal["written", "notFound", "addressHeldByAnotherContact", "contactWasCollected"] = (
        Field(
            description="written: the record is amended. notFound: no contact of that "
            "identifier. addressHeldByAnotherContact: an address belongs to somebody else. "
            "contactWasCollected: the record was collected from mail; promote_contact first. "
            "Nothing is written on any state but written."
        )
    )
    contact: ContactModel | None = Field(default=None, description=_CONTACT)
    addressHolderContactId: OwnText | None = Field(default=None, description=_HOLDER)


class DeleteContactResult(Published):
    contactId: OwnText = Field(description="The identity the erasure was asked for.")
    wasHeld: bool = Field(description="Whether the book held that contact when it ran.")
    addressesErased: int = Field(description="How many of the person's addresses went.")


class PromoteContactResult(Published):
    state: Literal["written", "notFound", "alreadyAsserted"] = Field(
        description="written: the record is now asserted and amendable. notFound: no "
        "contact of that identifier. alreadyAsserted: nothing was left to do."
    )
