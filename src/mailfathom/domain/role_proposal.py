"""Which of a server's folders play which role, as proposed to a person setting up an account.

A server that implements SPECIAL-USE (RFC 6154) says so itself: each of `\\Sent`, `\\Drafts`,
`\\Trash`, `\\Junk` and `\\Archive` on a folder's LIST line names its role (section 2). Only a
server that announces none of them has its folders matched by common names, and every such
match is marked as guessed, so the person knows which to check. INBOX is the inbox on every
server (RFC 3501 section 5.1).

Three attributes name views rather than places: `\\All` (every message of the mailbox),
`\\Flagged` (the starred ones, RFC 6154 section 2) and `\\Important` (RFC 8457). Every message
such a folder shows is in another folder too, so keeping it would store each of them again;
a proposal leaves them out of the mapping, which is what keeps them from being synchronized
(a folder mapped `VisibleToTools = false` is still synchronized), and `left_out_folders` names
them with the entry that would keep one. A server that has an `\\All` folder publishes labels
as folders, the way Gmail does: one message carrying the labels INBOX and Work is listed in
INBOX, in Work and in the `\\All` folder. There every other selectable folder is a label and
is proposed, without a role, since mail filed under a label is nowhere else but in the view.
Elsewhere only INBOX and the folders with a role are proposed, as before.
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
}
# The attributes of views (see the module docstring), with the role a folder would be mapped
# with if a person chose to keep it.
VIEWS: dict[str, FolderRole | None] = {
    "\\all": FolderRole.ALL,
    "\\flagged": FolderRole.FLAGGED,
    "\\important": None,
}
_ALL = "\\all"
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
    """A folder to map. `role` is None for a label (a folder of a server with an `\\All`
    folder that plays no role)."""

    remote: str
    role: FolderRole | None
    guessed: bool
    # The attribute that named the role (as RFC 6154 spells it), or None for INBOX, for a
    # guess and for a label.
    announced_by: str | None = None


@dataclass(frozen=True, slots=True)
class LeftOutFolder:
    """A view a proposal does not map: its name, the attribute that makes it one (as the
    RFCs spell it) and the role to map it with if it is to be kept after all."""

    remote: str
    announced_by: str
    role: FolderRole | None


def announces_special_use(folders: Iterable[ServerFolder]) -> bool:
    known = SPECIAL_USE.keys() | VIEWS.keys()
    return any(folder.attributes & known for folder in folders)


def _spelled(attribute: str) -> str:
    """An attribute as the RFCs spell it: `\\all` is `\\All`."""
    return "\\" + attribute[1:].capitalize()


def _is_inbox(folder: ServerFolder) -> bool:
    return folder.name.upper() == "INBOX"


def left_out_folders(folders: Sequence[ServerFolder]) -> list[LeftOutFolder]:
    """The selectable views of `folders` (but INBOX), in LIST order."""
    found: list[LeftOutFolder] = []
    for folder in folders:
        views = sorted(folder.attributes & VIEWS.keys())
        if folder.selectable and views and not _is_inbox(folder):
            found.append(LeftOutFolder(folder.name, _spelled(views[0]), VIEWS[views[0]]))
    return found


def propose_folders(folders: Sequence[ServerFolder]) -> list[ProposedFolder]:
    """INBOX, then one folder per role the server names (the first in LIST order), or, when
    it names none, the folder best matching that role's common names; then, on a server with
    an `\\All` folder, every label in LIST order. Views are never proposed."""
    views = {f.remote for f in left_out_folders(folders)}
    usable = [f for f in folders if f.selectable and f.name not in views]
    proposed = [
        ProposedFolder(f.name, FolderRole.INBOX, guessed=False)
        for f in usable
        if f.name.upper() == "INBOX"
    ][:1]
    if not proposed:
        proposed = [ProposedFolder("INBOX", FolderRole.INBOX, guessed=False)]
    if announces_special_use(folders):
        taken: set[FolderRole] = set()
        placed: set[str] = set()
        for folder in usable:
            for attribute in sorted(folder.attributes & SPECIAL_USE.keys()):
                role = SPECIAL_USE[attribute]
                if role in taken or _is_inbox(folder):
                    continue
                taken.add(role)
                placed.add(folder.name)
                proposed.append(ProposedFolder(folder.name, role, False, _spelled(attribute)))
                break
        if any(_ALL in f.attributes for f in folders if f.selectable):
            proposed += [
                ProposedFolder(f.name, None, guessed=False)
                for f in usable
                if not _is_inbox(f) and f.name not in placed
            ]
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
        if _is_inbox(folder):
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
