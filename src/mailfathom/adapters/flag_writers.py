"""Carrying recorded flag changes over a synchronization run's own session.

`FlagChangeCarrier` picks the writer for the kind of session a run holds (an IMAP server or a
local Maildir) and lets the records' convergence issue the commands over it.
"""

from __future__ import annotations

from collections.abc import Callable

from mailfathom.adapters.imap.flag_store import ImapFlagWriter
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.adapters.local.flag_writer import MaildirFlagWriter
from mailfathom.adapters.local.maildir import LocalSession
from mailfathom.app.flags.convergence import MutationConvergence
from mailfathom.app.flags.ports import FlagWriter
from mailfathom.app.flags.signal import MutationSignal
from mailfathom.app.sync.ports import MailboxSession
from mailfathom.domain.config import AccountConfig


class FlagChangeCarrier:
    def __init__(self, convergence: MutationConvergence, signal: MutationSignal) -> None:
        self._convergence = convergence
        self._signal = signal

    def waiting(self, account_id: str) -> bool:
        return self._convergence.pending(account_id)

    def carry(self, account: AccountConfig, session: MailboxSession) -> None:
        writer: FlagWriter
        if isinstance(session, ImapSession):
            writer = ImapFlagWriter(session)
        elif isinstance(session, LocalSession):
            writer = MaildirFlagWriter(session)
        else:
            return
        self._convergence.converge(account.account_id, writer)

    def listen(self, account_id: str, wake: Callable[[], None]) -> None:
        self._signal.listen(account_id, wake)
