"""The roles `mailfathom init` proposes for a server's folders (RFC 6154)."""

from __future__ import annotations

from mailfathom.domain.folders import FolderRole
from mailfathom.domain.role_proposal import ServerFolder, propose_folders


def folder(name: str, *attributes: str, delimiter: str = "/") -> ServerFolder:
    return ServerFolder(name, frozenset(a.lower() for a in attributes), delimiter)


def test_every_special_use_attribute_names_its_role_and_nothing_is_guessed() -> None:
    found = propose_folders(
        [
            folder("INBOX", "\\HasNoChildren"),
            folder("[Gmail]", "\\Noselect", "\\HasChildren"),
            folder("[Gmail]/All Mail", "\\All", "\\HasNoChildren"),
            folder("[Gmail]/Bin", "\\Trash"),
            folder("[Gmail]/Drafts", "\\Drafts"),
            folder("[Gmail]/Sent Mail", "\\Sent"),
            folder("[Gmail]/Spam", "\\Junk"),
            folder("[Gmail]/Starred", "\\Flagged"),
            folder("Old", "\\Archive"),
            folder("Sent", "\\HasNoChildren"),
        ]
    )
    assert {(f.remote, f.role) for f in found} == {
        ("INBOX", FolderRole.INBOX),
        ("[Gmail]/All Mail", FolderRole.ALL),
        ("[Gmail]/Bin", FolderRole.TRASH),
        ("[Gmail]/Drafts", FolderRole.DRAFTS),
        ("[Gmail]/Sent Mail", FolderRole.SENT),
        ("[Gmail]/Spam", FolderRole.JUNK),
        ("[Gmail]/Starred", FolderRole.FLAGGED),
        ("Old", FolderRole.ARCHIVE),
    }
    assert not any(f.guessed for f in found)
    assert {f.announced_by for f in found if f.role is FolderRole.SENT} == {"\\Sent"}


def test_the_first_folder_announcing_a_role_keeps_it() -> None:
    found = propose_folders([folder("INBOX"), folder("A", "\\Sent"), folder("B", "\\Sent")])
    assert [(f.remote, f.role) for f in found] == [
        ("INBOX", FolderRole.INBOX),
        ("A", FolderRole.SENT),
    ]


def test_names_are_matched_only_when_no_folder_is_announced() -> None:
    found = propose_folders(
        [
            folder("INBOX", delimiter="."),
            folder("INBOX.Sent Messages", delimiter="."),
            folder("INBOX.Sent", delimiter="."),
            folder("INBOX.spam", delimiter="."),
            folder("INBOX.Deleted Items", delimiter="."),
            folder("Archive", "\\Noselect", delimiter="."),
            folder("Notes", delimiter="."),
        ]
    )
    assert [(f.remote, f.role, f.guessed) for f in found] == [
        ("INBOX", FolderRole.INBOX, False),
        ("INBOX.Sent", FolderRole.SENT, True),
        ("INBOX.Deleted Items", FolderRole.TRASH, True),
        ("INBOX.spam", FolderRole.JUNK, True),
    ]
