"""Which people a folder's mail puts in the contact book, and under what name.

The book collects whoever wrote to the owner and whoever the owner wrote to: the senders of
mail in every folder visible to tools but Junk (a spammer is nobody the owner knows), and the
recipients of mail in Sent (To, Cc and Bcc). A folder withheld from tools contributes nobody,
since the book is read by tools. The owner's own addresses are never collected, and neither is
an address the book could not hold as written by a person: one that is not a plain address.
A name that a person could not read as written (a control or invisible character, or one
longer than a record holds) is not kept, while the address still is.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from mailfathom.domain import addresses, text_rules
from mailfathom.domain.contacts import MAX_ADDRESS_CHARACTERS, MAX_NAME_CHARACTERS, address_key
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import HeaderRole, Participant

_SENDER_ROLES = frozenset({HeaderRole.FROM})
_RECIPIENT_ROLES = frozenset({HeaderRole.TO, HeaderRole.CC, HeaderRole.BCC})


@dataclass(frozen=True, slots=True)
class SeenPerson:
    """One address seen in mail, as written, with the name it was written with ("" when
    none was, or none that may be kept)."""

    address: str
    display_name: str

    @property
    def key(self) -> str:
        return address_key(self.address)


def collected_roles(role: FolderRole | None) -> frozenset[HeaderRole]:
    """The address headers whose mailboxes a folder of that role contributes."""
    if role is FolderRole.JUNK:
        return frozenset()
    if role is FolderRole.SENT:
        return _SENDER_ROLES | _RECIPIENT_ROLES
    return _SENDER_ROLES


def kept_name(display_name: str | None) -> str:
    """The name as a record may hold it, or "" when it may not be kept."""
    if display_name is None:
        return ""
    name = display_name.strip()
    if (
        len(name) > MAX_NAME_CHARACTERS
        or not text_rules.is_name(name)
        or text_rules.has_invisible_character(name)
    ):
        return ""
    return name


def is_collectable_address(address: str) -> bool:
    """Whether the book may hold `address` as somebody's: a plain address (which also
    rules out line breaks, spaces and every invisible character)."""
    return len(address) <= MAX_ADDRESS_CHARACTERS and addresses.is_plain_address(address)


def people_seen(
    participants: Iterable[Participant],
    role: FolderRole | None,
    own_addresses: Collection[str],
) -> list[SeenPerson]:
    """The people a folder of `role` collects from these participants, each address once
    (by comparison form), in the order first seen; the first non-empty name seen is kept.
    `own_addresses` are lower-cased."""
    wanted = collected_roles(role)
    if not wanted:
        return []
    found: dict[str, SeenPerson] = {}
    for participant in participants:
        if participant.role not in wanted or not is_collectable_address(participant.address):
            continue
        key = address_key(participant.address)
        if key in own_addresses:
            continue
        held = found.get(key)
        if held is not None and held.display_name:
            continue
        name = kept_name(participant.display_name)
        if held is None or name:
            found[key] = SeenPerson(held.address if held else participant.address, name)
    return list(found.values())
