"""Feeding the contact book from the mail a synchronization commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mailfathom.app.sync.ports import ContactCollector
from mailfathom.app.sync.types import FolderRecord, NewMessage, SyncReport
from mailfathom.domain.contact_collection import people_seen
from mailfathom.domain.folders import FolderRole


def collect_batch(
    collector: ContactCollector,
    own_addresses: frozenset[str],
    folder: FolderRecord,
    items: Sequence[NewMessage],
    at: datetime,
) -> int:
    """Hand the people a committed batch names to the book, in one call; answers how many
    records it wrote. The whole batch is handed over, rows that were already stored
    included: the book adds nothing for an address it holds, so a batch committed twice (a
    pass run again, or a folder read anew after its UIDVALIDITY changed) collects nobody
    twice. A folder withheld from tools contributes nobody: the book is read by tools, and
    what it held from such a folder would be a way round the withholding."""
    if not folder.visible_to_tools:
        return 0
    role = FolderRole.parse(folder.role) if folder.role is not None else None
    seen = people_seen(
        (p for item in items for p in item.normalized.participants), role, own_addresses
    )
    return collector.collect(seen, at) if seen else 0


def support_may_have_moved(folder: FolderRecord, report: SyncReport) -> bool:
    """Whether a pass may have left an address that only withheld mail names: mail stored
    in a withheld folder (moved there, perhaps), or mail gone from a visible one."""
    if folder.visible_to_tools:
        return report.removed > 0 or report.uidvalidity_reset
    return report.stored > 0
