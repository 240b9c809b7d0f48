"""Finishing the drafts folder of one account, as part of its synchronization pass.

Runs before the pass reads the account's folders, so a copy appended here is stored in the
same pass and one taken out is gone from the store in it too.
"""

from __future__ import annotations

import structlog

from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.domain.config import AccountConfig

log = structlog.get_logger("mailfathom.drafts")


class DraftFolderUpkeep:
    def __init__(self, copies: DraftCopies) -> None:
        self._copies = copies

    def run(self, account: AccountConfig) -> None:
        """Never raises: a folder that cannot be brought in step now is the next pass's."""
        try:
            self._copies.finish(account.account_id)
        except Exception as failure:
            log.error(
                "drafts.upkeep_failed",
                account=account.account_id,
                error_type=type(failure).__name__,
            )
