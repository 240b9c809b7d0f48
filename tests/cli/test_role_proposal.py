"""The roles `mailfathom init` proposes for a server's folders (RFC 6154)."""

from __future__ import annotations

from mailfathom.domain.folders import FolderRole
from mailfathom.domain.role_proposal import ServerFolder, left_out_folders, propose_folders


def folder(name: str, *attributes: str, delimiter: str = "/") -> ServerFolder:
    return ServerFolder(name, frozenset(a.lower() for a in attributes), delimiter)


def test_every_special_use_attribute_names_its_role_and_nothing_is_guessed() -> None:
    found = propose_folders(
        [
            folder("INBOX", "\\HasNoChildren"),
            folder("Bin", "\\Trash"),
            folder("Drafts", "\\Drafts"),
            folder("Sent Mail", "\\Sent"),
            folder("Spam", "\\Junk"),
            folder("Old", "\\Archive"),
            folder("Sent", "\\HasNoChildren"),
        ]
    )
    assert {(f.remote, f.role) for f in found} == {
        ("INBOX", FolderRole.INBOX),
        ("Bin", FolderRole.TRASH),
        ("Drafts", FolderRole.DRAFTS),
        ("Sent Mail", FolderRole.SENT),
        ("Spam", FolderRole.JUNK),
        ("Old", FolderRole.ARCHIVE),
    }
    assert not any(f.guessed for f in found)
    assert {f.announced_by for f in found if f.role is FolderRole.SENT} == {"\\Sent"}


GMAIL = [
    folder("INBOX", "\\HasNoChildren"),
    folder("Receipts", "\\HasNoChildren"),
    folder("Work", "\\HasChildren"),
    folder("Work/Projects", "\\HasNoChildren"),
    folder("[Gmail]", "\\Noselect", "\\HasChildren"),
    folder("[Gmail]/All Mail", "\\All", "\\HasNoChildren"),
    folder("[Gmail]/Bin", "\\Trash", "\\HasNoChildren"),
    folder("[Gmail]/Drafts", "\\Drafts", "\\HasNoChildren"),
    folder("[Gmail]/Important", "\\Important", "\\HasNoChildren"),
    folder("[Gmail]/Sent Mail", "\\Sent", "\\HasNoChildren"),
    folder("[Gmail]/Spam", "\\Junk", "\\HasNoChildren"),
    folder("[Gmail]/Starred", "\\Flagged", "\\HasNoChildren"),
]


def test_on_a_server_of_labels_the_views_are_left_out_and_every_label_is_kept() -> None:
    found = propose_folders(GMAIL)
    assert [(f.remote, f.role, f.guessed) for f in found] == [
        ("INBOX", FolderRole.INBOX, False),
        ("[Gmail]/Bin", FolderRole.TRASH, False),
        ("[Gmail]/Drafts", FolderRole.DRAFTS, False),
        ("[Gmail]/Sent Mail", FolderRole.SENT, False),
        ("[Gmail]/Spam", FolderRole.JUNK, False),
        ("Receipts", None, False),
        ("Work", None, False),
        ("Work/Projects", None, False),
    ]
    assert [f.announced_by for f in found if f.role is None] == [None, None, None]


def test_the_folders_left_out_say_which_attribute_made_them_views() -> None:
    assert [(f.remote, f.announced_by, f.role) for f in left_out_folders(GMAIL)] == [
        ("[Gmail]/All Mail", "\\All", FolderRole.ALL),
        ("[Gmail]/Important", "\\Important", None),
        ("[Gmail]/Starred", "\\Flagged", FolderRole.FLAGGED),
    ]


def test_a_view_folder_is_left_out_on_any_server_but_other_folders_are_kept_only_beside_all() -> (
    None
):
    listed = [
        folder("INBOX"),
        folder("Sent", "\\Sent"),
        folder("Flagged", "\\Flagged"),
        folder("Projects"),
    ]
    assert [(f.remote, f.role) for f in propose_folders(listed)] == [
        ("INBOX", FolderRole.INBOX),
        ("Sent", FolderRole.SENT),
    ]
    assert [f.remote for f in left_out_folders(listed)] == ["Flagged"]


def test_a_server_announcing_nothing_leaves_nothing_out() -> None:
    assert left_out_folders([folder("INBOX"), folder("All Mail"), folder("Starred")]) == []


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
