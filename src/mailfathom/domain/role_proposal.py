"""Which of a server's folders play which role, as proposed to a person setting up an account.

A server that implements SPECIAL-USE (RFC 6154) says so itself: each of `\\Sent`, `\\Drafts`,
`\\Trash`, `\\Junk`, `\\Archive`, `\\All` and `\\Flagged` on a folder's LIST line names its role
(section 2). Only a server that announces none of them has its folders matched by common
names, and every such match is marked as guessed, so the person knows which to check. INBOX
is the inbox on every server (RFC 3501 section 5.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mailfathom.domain.folders import FolderRole

SPECIAL_USE: dict[str, FolderRole] = {
    "\\sent": FolderRole.SENT,
    "\\drafts": FolderRole.DRAFTS,
    "\\trash": FolderRole.TRASH,
    "\\junk": FolderRole.JUNK,
    "\\archive": FolderRole.ARCHIVE,
    "\\all": FolderRole.ALL,
    "\\flagged": FolderRole.FLAGGED,
}
# Names widely used for these folders by servers and clients that predate SPECIAL-USE, in the
# order they are preferred when a server has more than one.
COMMON_NAMES: dict[FolderRole, tuple[str, ...]] = {
    FolderRole.SENT: ("sent", "sent items", "sent messages", "sent mail"),
    FolderRole.DRAFTS: ("drafts", "draft"),
    FolderRole.TRASH: ("trash", "deleted items", "deleted messages", "bin"),
    FolderRole.JUNK: ("junk", "spam", "junk e-mail", "junk email", "bulk mail"),
    FolderRole.ARCHIVE: ("archive", "archives"),
}
_NOT_SELECTABLE = frozenset({"\\noselect", "\\nonexistent"})


@dataclass(frozen=True, slots=True)
class ServerFolder:
    """A folder as the server's LIST answer shows it: its name, its attributes (in lower
    case, with their backslash) and its hierarchy delimiter."""

    name: str
    attributes: frozenset[str]
    delimiter: str | None = None

    @property
    def selectable(self) -> bool:
        return not self.attributes & _NOT_SELECTABLE


@dataclass(frozen=True, slots=True)
class ProposedFolder:
    remote: str
    role: FolderRole
    guessed: bool
    # The attribute that named the role (as RFC 6154 spells it), or None for INBOX and for a
    # guess.
    announced_by: str | None = None


def announces_special_use(folders: Iterable[ServerFolder]) -> bool:
    return any(folder.attributes & SPECIAL_USE.keys() for folder in folders)


def propose_folders(folders: Sequence[ServerFolder]) -> list[ProposedFolder]:
    """INBOX, then one folder per role the server names (the first in LIST order), or, when
    it names none, the folder best matching that role's common names."""
    usable = [f for f in folders if f.selectable]
    proposed = [
        ProposedFolder(f.name, FolderRole.INBOX, guessed=False)
        for f in usable
        if f.name.upper() == "INBOX"
    ][:1]
    if not proposed:
        proposed = [ProposedFolder("INBOX", FolderRole.INBOX, guessed=False)]
    if announces_special_use(usable):
        taken: set[FolderRole] = set()
        for folder in usable:
            for attribute in sorted(folder.attributes & SPECIAL_USE.keys()):
                role = SPECIAL_USE[attribute]
                if role in taken or folder.name.upper() == "INBOX":
                    continue
                taken.add(role)
                proposed.append(ProposedFolder(folder.name, role, False, "\\" + role.value))
                break
        return proposed
    for role, names in COMMON_NAMES.items():
        match = _best_named(usable, names)
        if match is not None:
            proposed.append(ProposedFolder(match.name, role, guessed=True))
    return proposed


def _best_named(folders: Sequence[ServerFolder], names: Sequence[str]) -> ServerFolder | None:
    """The folder whose name (or whose name below INBOX, as some servers keep every folder)
    is earliest in `names`, compared without regard to case."""
    best: tuple[int, ServerFolder] | None = None
    for folder in folders:
        if folder.name.upper() == "INBOX":
            continue
        rank = _rank(_short_name(folder), names)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, folder)
    return None if best is None else best[1]


def _short_name(folder: ServerFolder) -> str:
    name = folder.name
    if folder.delimiter and name.upper().startswith("INBOX" + folder.delimiter):
        name = name[len("INBOX") + len(folder.delimiter) :]
    return name.casefold()


def _rank(name: str, names: Sequence[str]) -> int | None:
    for index, candidate in enumerate(names):
        if name == candidate:
            return index
    return None
