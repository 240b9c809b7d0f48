"""Which mailboxes of a folder's mail the book collects: senders outside Junk, recipients in
Sent, never the account's own addresses, never an address that is not a plain one, and a
name only where a person could read it as written."""

from __future__ import annotations

import pytest

from mailfathom.domain.contact_collection import SeenPerson, people_seen
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import HeaderRole, Participant

MAIL = (
    Participant(HeaderRole.FROM, "writer@example.org", "Writer"),
    Participant(HeaderRole.SENDER, "list-owner@example.org", "List"),
    Participant(HeaderRole.REPLY_TO, "replies@example.org", None),
    Participant(HeaderRole.TO, "to@example.org", "To"),
    Participant(HeaderRole.CC, "cc@example.org", None),
    Participant(HeaderRole.BCC, "bcc@example.org", "Bcc"),
)


@pytest.mark.parametrize(
    "role", [None, FolderRole.INBOX, FolderRole.ARCHIVE, FolderRole.TRASH, FolderRole.DRAFTS]
)
def test_a_folder_other_than_sent_or_junk_collects_its_senders(role: FolderRole | None) -> None:
    assert people_seen(MAIL, role, frozenset()) == [SeenPerson("writer@example.org", "Writer")]


def test_sent_collects_its_senders_and_every_recipient() -> None:
    assert people_seen(MAIL, FolderRole.SENT, frozenset()) == [
        SeenPerson("writer@example.org", "Writer"),
        SeenPerson("to@example.org", "To"),
        SeenPerson("cc@example.org", ""),
        SeenPerson("bcc@example.org", "Bcc"),
    ]


def test_junk_collects_nobody() -> None:
    assert people_seen(MAIL, FolderRole.JUNK, frozenset()) == []


def test_the_accounts_own_addresses_are_never_collected() -> None:
    own = frozenset({"writer@example.org", "cc@example.org"})
    mail = (*MAIL, Participant(HeaderRole.TO, "Writer@EXAMPLE.org", "Me"))
    assert people_seen(mail, FolderRole.SENT, own) == [
        SeenPerson("to@example.org", "To"),
        SeenPerson("bcc@example.org", "Bcc"),
    ]


@pytest.mark.parametrize(
    "address",
    [
        "no-at-sign",
        "two@@example.org",
        "spaced name@example.org",
        "line@example.org\r\nBcc: victim@example.org",
        "zero\u200bwidth@example.org",
        "bidi\u202e@example.org",
        "ünicode@example.org",
        "nodot@localhost",
        "x" * 65 + "@example.org",
    ],
)
def test_an_address_that_is_not_plain_is_skipped(address: str) -> None:
    mail = (Participant(HeaderRole.FROM, address, "Name"),)
    assert people_seen(mail, FolderRole.INBOX, frozenset()) == []


@pytest.mark.parametrize(
    "name",
    ["Evil\r\nBcc: x", "Hidden\u200bName", "Flipped\u202eName", "Tab\tName", "n" * 257, "   "],
)
def test_a_name_that_cannot_be_kept_leaves_the_address_nameless(name: str) -> None:
    mail = (Participant(HeaderRole.FROM, "kept@example.org", name),)
    assert people_seen(mail, FolderRole.INBOX, frozenset()) == [SeenPerson("kept@example.org", "")]


def test_each_address_once_with_the_first_name_seen() -> None:
    mail = (
        Participant(HeaderRole.FROM, "Same@example.org", None),
        Participant(HeaderRole.FROM, "same@example.org", "  Named  "),
        Participant(HeaderRole.FROM, "SAME@example.org", "Other"),
    )
    assert people_seen(mail, FolderRole.INBOX, frozenset()) == [
        SeenPerson("Same@example.org", "Named")
    ]
