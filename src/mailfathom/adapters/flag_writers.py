"""Carrying recorded flag changes and moves over a synchronization run's own session.

`FlagChangeCarrier` picks the writer for the kind of session a run holds (an IMAP server or a
local Maildir) and lets the records' convergence issue the commands over it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from mailfathom.adapters.imap.flag_store import ImapFlagWriter
from mailfathom.adapters.imap.folder_writer import ImapFolderWriter
from mailfathom.adapters.imap.move_store import ImapMoveWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.local.flag_writer import MaildirFlagWriter
from mailfathom.adapters.local.folder_writer import MaildirFolderWriter
from mailfathom.adapters.local.maildir import LocalSession
from mailfathom.adapters.local.move_writer import MaildirMoveWriter
from mailfathom.app.flags.convergence import MutationConvergence
from mailfathom.app.flags.ports import FlagWriter
from mailfathom.app.flags.signal import MutationSignal
from mailfathom.app.organize.folder_creations import FolderCreationConvergence
from mailfathom.app.organize.moves import MoveConvergence
from mailfathom.app.organize.ports import FolderWriter, MoveWriter
from mailfathom.app.sync.ports import MailboxSession
from mailfathom.domain.config import AccountConfig


class FlagChangeCarrier:
    def __init__(
        self,
        convergence: MutationConvergence,
        signal: MutationSignal,
        moves: MoveConvergence | None = None,
        creations: FolderCreationConvergence | None = None,
    ) -> None:
        self._convergence = convergence
        self._signal = signal
        self._moves = moves
        self._creations = creations

    def waiting(self, account_id: str) -> bool:
        creations = self._creations.pending(account_id) if self._creations else 0
        return creations > 0 or self._convergence.pending(account_id)

    def mark(self, account_id: str) -> Hashable:
        creations = self._creations.pending(account_id) if self._creations else 0
        return (self._convergence.mark(account_id), creations)

    def carry(self, account: AccountConfig, session: MailboxSession) -> None:
        writer: FlagWriter
        mover: MoveWriter
        folders: FolderWriter
        if isinstance(session, ImapSession):
            writer, mover = ImapFlagWriter(session), ImapMoveWriter(session)
            folders = ImapFolderWriter(session)
        elif isinstance(session, LocalSession):
            writer, mover = MaildirFlagWriter(session), MaildirMoveWriter(session)
            folders = MaildirFolderWriter(session)
        else:
            return
        # Folders first: a move into a folder asked for with it is carried in the same run.
        if self._creations is not None:
            self._creations.converge(account.account_id, folders)
        # Flags first: a flag change recorded before a move is issued where the message is.
        self._convergence.converge(account.account_id, writer)
        if self._moves is not None:
            self._moves.converge(account.account_id, mover)

    def listen(self, account_id: str, wake: Callable[[], None]) -> None:
        self._signal.listen(account_id, wake)

    def unlisten(self, account_id: str, wake: Callable[[], None]) -> None:
        self._signal.unlisten(account_id, wake)
