"""Writing down the coded failure a synchronization pass stopped on, per account and
folder, and clearing it when a pass succeeds (`mfctl accounts` and the console's health page
read it).

Keeping the record must never stop synchronization: a store that cannot take it is logged
(by the failure's type) and the run goes on as it would have."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from typing import Protocol

import structlog

from mailfathom.domain.sync_failures import failure_code

log = structlog.get_logger("mailfathom.sync")


class SyncFailureStore(Protocol):
    def failed(self, account_id: str, folder_id: int | None, code: int, at: datetime) -> None:
        """Keep `code` and `at` as the last failure of the account's pass (`folder_id`
        None) or of one folder's, replacing what was kept."""
        ...

    def passed(self, account_id: str, folder_ids: Collection[int]) -> None:
        """Forget the account's pass failure and those of `folder_ids`."""
        ...


class FailureRecord:
    def __init__(self, store: SyncFailureStore, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock

    def account_failed(self, account_id: str, error: BaseException) -> None:
        self._keep(lambda: self._store.failed(account_id, None, failure_code(error), self._clock()))

    def folder_failed(self, account_id: str, folder_id: int, code: int) -> None:
        self._keep(lambda: self._store.failed(account_id, folder_id, code, self._clock()))

    def passed(self, account_id: str, folder_ids: Collection[int]) -> None:
        self._keep(lambda: self._store.passed(account_id, folder_ids))

    @staticmethod
    def _keep(write: Callable[[], None]) -> None:
        try:
            write()
        except Exception as error:  # the record is an aid, never a reason to stop a run
            log.warning("sync.failure_not_recorded", error=type(error).__name__)
