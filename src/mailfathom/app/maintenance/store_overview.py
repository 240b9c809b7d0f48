"""What the operator's command line shows of the local store: per mapped folder, how many
messages are held and when synchronization last committed progress."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mailfathom.app.maintenance.ports import StoreOverviewStore
from mailfathom.domain.config import AccountConfig, FolderMapping


@dataclass(frozen=True, slots=True)
class FolderLine:
    mapping: FolderMapping
    messages: int
    last_committed_at: datetime | None
    # The store's identifier of the folder; None until a pass first set it up.
    folder_id: int | None = None


class StoreOverview:
    def __init__(self, store: StoreOverviewStore) -> None:
        self._store = store

    def folders(self, account: AccountConfig) -> list[FolderLine]:
        """Every folder the account maps, in the configured order."""
        counts = self._store.message_counts(account.account_id)
        records = {r.remote_name: r for r in self._store.folders_of(account.account_id)}
        lines = []
        for mapping in account.folders:
            record = records.get(mapping.remote_name)
            lines.append(
                FolderLine(
                    mapping,
                    counts.get(record.folder_id, 0) if record else 0,
                    record.last_committed_at if record else None,
                    record.folder_id if record else None,
                )
            )
        return lines

    def summary(self, account_id: str) -> list[tuple[str, int, int, int, int]]:
        """Per folder: alias, messages, conversations, messages with attachments, unread."""
        return self._store.summary(account_id)
