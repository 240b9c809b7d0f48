"""The last coded failure of an account's or a folder's synchronization, kept until a pass
succeeds, so whoever looks later sees why it stopped without reading the log.

Only the code and the time are kept: a server's text may repeat what a remote party wrote."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mailfathom.domain.errors import MailFathomError, SyncError

FOLDER_NOT_ON_SERVER = 31006
"""A mapped folder the account's server no longer lists (deleted or renamed there): its pass
is skipped until the folder is back or the configuration stops mapping it."""


@dataclass(frozen=True, slots=True)
class SyncFailure:
    """`folder_id` None: the account's pass as a whole failed (its login, its session, the
    changes carried before it); otherwise that folder's pass did."""

    account_id: str
    folder_id: int | None
    code: int
    at: datetime


def failure_code(error: BaseException) -> int:
    """The code a failure is kept under: its own, or a synchronization step's (31001) for a
    failure raised without one."""
    return error.code if isinstance(error, MailFathomError) else SyncError.code
