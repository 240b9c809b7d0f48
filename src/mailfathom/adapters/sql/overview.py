"""What the store holds per account, for the command line and the storage ceiling.

No use case port declares these: the commands that show a store's contents and the
synchronizer's storage ceiling (given as a function) are their only readers."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import folders, messages
from mailfathom.adapters.sql.store_base import SqlTables, folder_record
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.content_state import ContentState


class SqlStoreOverview(SqlTables):
    """Counts and folder rows per account."""

    def folders_of(self, account_id: str) -> list[FolderRecord]:
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(folders)
                .where(folders.c.account_id == account_id)
                .order_by(folders.c.alias)
            ).all()
        return [folder_record(r) for r in rows]

    def stored_octets(self, account_id: str) -> int:
        with self.engine.connect() as c:
            total = c.execute(
                sa.select(sa.func.coalesce(sa.func.sum(messages.c.size_octets), 0)).where(
                    messages.c.account_id == account_id,
                    messages.c.content_state == ContentState.STORED.value,
                )
            ).scalar_one()
        return int(total)

    def message_counts(self, account_id: str) -> dict[int, int]:
        with self.engine.connect() as c:
            return {
                int(folder_id): int(count)
                for folder_id, count in c.execute(
                    sa.select(messages.c.folder_id, sa.func.count())
                    .where(messages.c.account_id == account_id)
                    .group_by(messages.c.folder_id)
                )
            }

    def summary(self, account_id: str) -> list[tuple[str, int, int, int, int]]:
        """Per folder: alias, messages, conversations, messages with attachments, unread."""
        with self.engine.connect() as c:
            rows = c.execute(
                sa.select(
                    folders.c.alias,
                    sa.func.count(messages.c.seq),
                    sa.func.count(sa.distinct(messages.c.thread_id)),
                    sa.func.count(messages.c.seq).filter(messages.c.attachment_count > 0),
                    sa.func.count(messages.c.seq).filter(messages.c.seen.is_(False)),
                )
                .select_from(
                    folders.outerjoin(
                        messages,
                        sa.and_(
                            messages.c.account_id == folders.c.account_id,
                            messages.c.folder_id == folders.c.folder_id,
                        ),
                    )
                )
                .where(folders.c.account_id == account_id)
                .group_by(folders.c.alias)
                .order_by(folders.c.alias)
            ).all()
        return [(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows]
