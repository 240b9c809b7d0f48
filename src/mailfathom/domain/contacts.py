"""The contact book's record and the rules every writer of it obeys.

A contact is one person: a name, every address they use (one of them preferred) and a note.
Two addresses are the same address when their comparison forms are equal (the whole address
lower-cased, as everywhere else mail is compared here), and one address belongs to at most one
contact. A record is either `asserted` (somebody wrote it down) or `collected` (this deployment
picked it up from mail); promotion moves a collected record to asserted and never back.

Refusals name the rule that was broken and never a value: a name, an address and a note are
personal data about somebody who is not the caller.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain import addresses, text_rules
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

MAX_NAME_CHARACTERS = 256
MAX_ADDRESSES = 32
MAX_ADDRESS_CHARACTERS = 320
MAX_NOTE_CHARACTERS = 4000

UNNAMED_PROMOTION = (
    "An asserted contact needs a name (displayName), and this collected one holds none, so it "
    "cannot be promoted; erase it and create the person with a name instead."
)


class ContactOrigin(enum.Enum):
    """Which half of the book a record is in."""

    ASSERTED = "asserted"
    COLLECTED = "collected"

    @classmethod
    def parse(cls, text: str) -> ContactOrigin | None:
        for member in cls:
            if member.value == text:
                return member
        return None


class ContactWriter(enum.Enum):
    """Who put an address into the book, which decides whether it vouches for the address
    (`MailDelivery.UnvouchedRecipients`): the operator (`mfctl contact`, an import), an MCP
    caller (the contact tools), collection from mail, or the deployment's own local accounts
    (peers). Kept per address, since a record one writer made may hold addresses another
    added."""

    OPERATOR = "operator"
    CALLER = "caller"
    COLLECTION = "collection"
    PEER = "peer"


def address_key(address: str) -> str:
    """The comparison form of an address: two addresses are one when these are equal."""
    return address.lower()


def name_key(display_name: str) -> str:
    """The comparison form of a name, which the book is ordered by."""
    return display_name.casefold()


@dataclass(frozen=True, slots=True)
class ContactRecord:
    """What a writer states about a person: the whole record, never a difference.

    `addresses` are as written, each once by comparison form; `preferred_address` is one of
    them, spelt as in `addresses`."""

    display_name: str
    addresses: tuple[str, ...]
    preferred_address: str
    note: str | None


@dataclass(frozen=True, slots=True)
class Contact:
    """One person as the book holds them. `addresses` lists the preferred address first and
    the rest in comparison order. `peer_account_id` names the local account the record was
    made for when it was made for a peer of the deployment, and is None otherwise."""

    contact_id: uuid.UUID
    display_name: str
    addresses: tuple[str, ...]
    preferred_address: str
    note: str | None
    origin: ContactOrigin
    recorded_at: datetime
    amended_at: datetime | None
    peer_account_id: str | None = None


def ordered_addresses(preferred: str, held: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The preferred address first, then the others in comparison order."""
    preferred_key = address_key(preferred)
    rest = sorted((a for a in held if address_key(a) != preferred_key), key=address_key)
    return (preferred, *rest)


def _broken(rule: str) -> Refusal:
    return Refusal(Code.CONTACT_RULE_BROKEN, rule)


def _check_name(display_name: object) -> str:
    if not isinstance(display_name, str) or not display_name.strip():
        raise _broken("A contact record needs a name (displayName).")
    if len(display_name) > MAX_NAME_CHARACTERS:
        raise _broken(
            f"A contact's name (displayName) is at most {MAX_NAME_CHARACTERS} characters."
        )
    if not text_rules.is_name(display_name):
        raise _broken("A contact's name (displayName) holds a control character.")
    if not text_rules.is_shown_name(display_name):
        # Collection keeps no such name either (`contact_collection.kept_name`).
        raise _broken(
            "A contact's name (displayName) holds a character that renders as nothing (a "
            "zero-width or other invisible character), which would let it look like another "
            "name, or like none."
        )
    return display_name


def _check_addresses(given: object) -> tuple[str, ...]:
    if not isinstance(given, (list, tuple)) or not given:
        raise _broken("A contact record needs at least one address (addresses).")
    if len(given) > MAX_ADDRESSES:
        raise _broken(f"A contact record holds at most {MAX_ADDRESSES} addresses.")
    seen: set[str] = set()
    for address in given:
        if not isinstance(address, str) or len(address) > MAX_ADDRESS_CHARACTERS:
            raise _broken(
                f"An entry of addresses is not text of at most {MAX_ADDRESS_CHARACTERS} characters."
            )
        if not addresses.is_plain_address(address):
            raise _broken("An entry of addresses is not an address (local@domain, no name).")
        key = address_key(address)
        if key in seen:
            raise _broken("A contact record names one address twice (addresses).")
        seen.add(key)
    return tuple(given)


def _check_note(note: object) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise _broken("A contact's note is text.")
    if len(note) > MAX_NOTE_CHARACTERS:
        raise _broken(f"A contact's note is at most {MAX_NOTE_CHARACTERS} characters.")
    if not text_rules.is_body_text(note):
        raise _broken("A contact's note holds a character text may not hold.")
    return note


def contact_record(
    display_name: object,
    given_addresses: object,
    preferred_address: object,
    note: object,
    *,
    unnamed_allowed: bool = False,
) -> ContactRecord:
    """The record a writer stated, once every rule of the book holds (51011 otherwise).
    `unnamed_allowed` is for a collected record carried back in (an import): collection
    keeps an address whose mail named nobody, so such a record may hold no name."""
    unnamed = display_name is None or (isinstance(display_name, str) and not display_name)
    name = "" if unnamed_allowed and unnamed else _check_name(display_name)
    held = _check_addresses(given_addresses)
    if not isinstance(preferred_address, str):
        raise _broken("A contact record names its preferred address (preferredAddress).")
    wanted = address_key(preferred_address)
    preferred = next((a for a in held if address_key(a) == wanted), None)
    if preferred is None:
        raise _broken("The preferred address is not one of the record's addresses.")
    return ContactRecord(name, held, preferred, _check_note(note))


def contact_identifier(value: object) -> uuid.UUID:
    """A contact's identity from its published form: a UUID, not the all-zero one (51010)."""
    refusal = Refusal(
        Code.NOT_A_CONTACT_IDENTIFIER, "The contactId is not a contact identifier (a UUID)."
    )
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        raise refusal
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        raise refusal from None
    if parsed.int == 0:
        raise refusal
    return parsed


def lookup_address(value: object) -> str:
    """An address a caller asks the book about: the address alone (51010 otherwise)."""
    if (
        not isinstance(value, str)
        or len(value) > MAX_ADDRESS_CHARACTERS
        or not addresses.is_plain_address(value)
    ):
        raise Refusal(
            Code.NOT_A_CONTACT_IDENTIFIER,
            "The address is not an address alone (local@domain, without a name).",
        )
    return value
