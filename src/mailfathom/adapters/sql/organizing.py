"""Records of organizing calls on SQLite and PostgreSQL: `SqlOrganizeStore`.

The records are the mutation records set_mail_flags writes (`adapters/sql/mutations.py`),
asked for up to a hundred emails in one commit.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.mutations import record_request
from mailfathom.adapters.sql.schema import folders, messages
from mailfathom.adapters.sql.store_base import accounts_of
from mailfathom.app.flags.ports import MutationTarget
from mailfathom.domain.mutations import MutationRecord, RequestedMutation

_M = messages.c
_F = folders.c


class SqlOrganizeStore:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def targets(
        self, stored_email_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, MutationTarget]:
        if not folder_ids or not stored_email_ids:
            return {}
        query = (
            sa.select(_M.stored_email_id, _M.account_id, _M.folder_id, _F.alias)
            .join(folders, _F.folder_id == _M.folder_id)
            .where(
                _M.stored_email_id.in_(list(stored_email_ids)),
                _M.folder_id.in_(list(folder_ids)),
                _M.uidvalidity == _F.uidvalidity,
            )
        )
        with self._engine.connect() as c:
            accounts = accounts_of(c, folder_ids)
            return {
                row.stored_email_id: MutationTarget(
                    row.stored_email_id, row.account_id, row.folder_id, row.alias
                )
                for row in c.execute(query.where(_M.account_id.in_(accounts)))
            }

    def record_each(
        self,
        targets: Sequence[MutationTarget],
        requester: str,
        request_id: str,
        asked: RequestedMutation,
        now: datetime,
    ) -> list[MutationRecord]:
        try:
            return self._record_each(targets, requester, request_id, asked, now)
        except sa.exc.IntegrityError:
            # A racing call with the same identity committed first: answer what it wrote.
            return self._record_each(targets, requester, request_id, asked, now)

    def _record_each(
        self,
        targets: Sequence[MutationTarget],
        requester: str,
        request_id: str,
        asked: RequestedMutation,
        now: datetime,
    ) -> list[MutationRecord]:
        with self._engine.begin() as c:
            return record_request(c, [(t, asked) for t in targets], requester, request_id, now)
