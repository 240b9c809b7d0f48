"""The folders visible to tools, kept by a reading process and checked in every snapshot.

Every read of the tools narrows what it is asked for to the folders visible to tools, so
every snapshot needs them. A process keeps them with the per-account counters of
`folder_versions` they were read under. Triggers on `folders` (migration 0031) move an
account's counter in the transaction of every change the read side shows (a folder added,
removed, renamed, shown, withheld or committed to), whichever process makes it; so a
snapshot reads the counters, one small statement inside its own transaction, and reads again
only the folders of the accounts whose counter it finds moved. What a snapshot uses is
therefore exactly what its transaction would have read from `folders` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import sqlalchemy as sa

from mailfathom.adapters.sql.fixed_reads import rows as fixed_rows
from mailfathom.adapters.sql.reading_rows import arrays, chunks, listed
from mailfathom.adapters.sql.schema import folder_versions, folders
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.domain.folders import FolderRole

_COUNTERS = sa.select(folder_versions.c.account_id, folder_versions.c.version)
_VISIBLE = {
    array: sa.select(
        folders.c.folder_id,
        folders.c.account_id,
        folders.c.alias,
        folders.c.role,
        folders.c.last_committed_at,
    ).where(folders.c.visible_to_tools.is_(True), listed(array, folders.c.account_id, "accounts"))
    for array in (False, True)
}


@dataclass(frozen=True, slots=True)
class _Kept:
    """The visible folders as of one set of counters, never changed once made."""

    counters: Mapping[str, int] = field(default_factory=dict)
    by_account: Mapping[str, Mapping[int, FolderView]] = field(default_factory=dict)
    visible: Mapping[int, FolderView] = field(default_factory=dict)


class FolderCatalog:
    """The visible folders of one database, shared by the readers of a process."""

    def __init__(self) -> None:
        self._kept = _Kept()

    def visible(self, connection: sa.Connection) -> Mapping[int, FolderView]:
        """Every folder visible to tools as `connection`'s transaction sees them, by id."""
        counters = {str(a): int(v) for a, v in fixed_rows(connection, _COUNTERS, {})}
        kept = self._kept
        if counters == kept.counters:
            return kept.visible
        moved = sorted(a for a, v in counters.items() if kept.counters.get(a) != v)
        by_account: dict[str, Mapping[int, FolderView]] = {
            a: found for a, found in kept.by_account.items() if a in counters and a not in moved
        }
        read: dict[str, dict[int, FolderView]] = {a: {} for a in moved}
        statement = _VISIBLE[arrays(connection)]
        for chunk in chunks(moved):
            for r in fixed_rows(connection, statement, {"accounts": list(chunk)}):
                read[r.account_id][int(r.folder_id)] = FolderView(
                    folder_id=int(r.folder_id),
                    account_id=r.account_id,
                    alias=r.alias,
                    role=FolderRole(r.role) if r.role is not None else None,
                    last_committed_at=r.last_committed_at,
                )
        by_account.update(read)
        visible = {i: view for found in by_account.values() for i, view in found.items()}
        # Snapshots of different ages may finish in any order: the one kept is the one read
        # last (one assignment, so never half of one), and a snapshot that finds other
        # counters reads again.
        self._kept = _Kept(counters, by_account, visible)
        return visible
