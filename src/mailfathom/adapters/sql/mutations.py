"""Durable mutation records on SQLite and PostgreSQL: `SqlMutationStore`."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql.schema import folders, keywords, messages, mutation_records
from mailfathom.adapters.sql.store_base import accounts_of
from mailfathom.app.flags.ports import MutationTarget, OpenMutation, RequestIdentityTaken
from mailfathom.domain.mutation_requests import request_digest, retried
from mailfathom.domain.mutations import (
    OPEN_STATES,
    MutationKind,
    MutationRecord,
    MutationState,
    RequestedMutation,
    keywords_of,
)

_R = mutation_records.c
_M = messages.c
_F = folders.c


class SqlMutationStore:
    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def target(
        self, stored_email_id: uuid.UUID, folder_ids: Sequence[int]
    ) -> MutationTarget | None:
        if not folder_ids:
            return None
        query = (
            sa.select(_M.stored_email_id, _M.account_id, _M.folder_id, _F.alias)
            .join(folders, _F.folder_id == _M.folder_id)
            .where(
                _M.stored_email_id == stored_email_id,
                _M.folder_id.in_(list(folder_ids)),
                _M.uidvalidity == _F.uidvalidity,
            )
        )
        with self._engine.connect() as c:
            accounts = accounts_of(c, folder_ids)
            row = c.execute(query.where(_M.account_id.in_(accounts))).first()
        if row is None:
            return None
        return MutationTarget(row.stored_email_id, row.account_id, row.folder_id, row.alias)

    def record(
        self,
        target: MutationTarget,
        requester: str,
        request_id: str,
        asked: Sequence[RequestedMutation],
        now: datetime,
    ) -> list[MutationRecord]:
        try:
            return self._record(target, requester, request_id, asked, now)
        except sa.exc.IntegrityError:
            # A racing call with the same identity committed first: answer what it wrote.
            return self._record(target, requester, request_id, asked, now)

    def _record(
        self,
        target: MutationTarget,
        requester: str,
        request_id: str,
        asked: Sequence[RequestedMutation],
        now: datetime,
    ) -> list[MutationRecord]:
        with self._engine.begin() as c:
            return record_request(c, [(target, m) for m in asked], requester, request_id, now)

    def open_mutations(self, account_id: str) -> list[OpenMutation]:
        # A record follows its email: where the stored row is now (a move carried since the
        # record was written took it to another folder), else the folder it was written for.
        place = folders.alias("place")
        query = (
            sa.select(
                _R.record_id,
                _R.kind,
                _R.value,
                sa.func.coalesce(place.c.folder_id, _R.folder_id).label("folder_id"),
                _R.attempts,
                sa.func.coalesce(place.c.remote_name, _F.remote_name).label("remote_name"),
                sa.case((place.c.folder_id.is_not(None), _M.uid), else_=None).label("uid"),
                sa.case((place.c.folder_id.is_not(None), _M.modseq), else_=None).label("modseq"),
            )
            .join(folders, _F.folder_id == _R.folder_id)
            .outerjoin(
                messages,
                sa.and_(_M.account_id == _R.account_id, _M.stored_email_id == _R.stored_email_id),
            )
            .outerjoin(
                place,
                sa.and_(place.c.folder_id == _M.folder_id, place.c.uidvalidity == _M.uidvalidity),
            )
            .where(
                _R.account_id == account_id,
                _R.state.in_([s.value for s in OPEN_STATES]),
            )
            .order_by(_R.seq)
        )
        with self._engine.connect() as c:
            return [
                OpenMutation(
                    record_id=row.record_id,
                    kind=MutationKind(row.kind),
                    value=row.value,
                    folder_id=row.folder_id,
                    remote_name=row.remote_name,
                    uid=row.uid,
                    modseq=row.modseq,
                    attempts=row.attempts,
                )
                for row in c.execute(query)
            ]

    def open_mark(self, account_id: str) -> tuple[int, int]:
        query = sa.select(sa.func.count(), sa.func.coalesce(sa.func.max(_R.seq), 0)).where(
            _R.account_id == account_id,
            _R.state.in_([s.value for s in OPEN_STATES]),
        )
        with self._engine.connect() as c:
            count, highest = c.execute(query).one()
        return int(count), int(highest)

    def begin(self, record_ids: Sequence[uuid.UUID], now: datetime) -> None:
        if not record_ids:
            return
        with self._engine.begin() as c:
            c.execute(
                mutation_records.update()
                .where(_R.record_id.in_(list(record_ids)))
                .values(
                    state=MutationState.CONVERGING.value,
                    attempts=_R.attempts + 1,
                    updated_at=now,
                )
            )

    def settle(
        self,
        record_ids: Sequence[uuid.UUID],
        state: MutationState,
        error_code: int | None,
        now: datetime,
    ) -> None:
        if not record_ids:
            return
        with self._engine.begin() as c:
            c.execute(
                mutation_records.update()
                .where(
                    _R.record_id.in_(list(record_ids)),
                    _R.state.in_([s.value for s in OPEN_STATES]),
                )
                .values(state=state.value, last_error_code=error_code, updated_at=now)
            )

    def advance(self, folder_id: int, modseqs: Mapping[int, int]) -> None:
        if not modseqs:
            return
        statement = (
            messages.update()
            .where(
                _M.folder_id == folder_id,
                _M.uid == sa.bindparam("b_uid"),
                _M.uidvalidity
                == sa.select(_F.uidvalidity).where(_F.folder_id == folder_id).scalar_subquery(),
                sa.or_(_M.modseq.is_(None), _M.modseq < sa.bindparam("b_modseq")),
            )
            .values(modseq=sa.bindparam("b_modseq"))
        )
        with self._engine.begin() as c:
            # One statement for every message (executemany), not one round of SQL each.
            c.execute(statement, [{"b_uid": u, "b_modseq": m} for u, m in modseqs.items()])

    def find(self, record_id: uuid.UUID) -> MutationRecord | None:
        with self._engine.connect() as c:
            row = c.execute(sa.select(mutation_records).where(_R.record_id == record_id)).first()
        return None if row is None else record_of(row)


def record_request(
    c: sa.Connection,
    asked: Sequence[tuple[MutationTarget, RequestedMutation]],
    requester: str,
    request_id: str,
    now: datetime,
) -> list[MutationRecord]:
    """Write the records of one request inside the caller's transaction, in the order asked,
    or answer the ones this same request already wrote under the requester and request
    identity; records another request wrote under that identity on one of these emails
    raise `RequestIdentityTaken` (`mutation_requests`)."""
    named = [(target.stored_email_id, mutation) for target, mutation in asked]
    digest = request_digest(named)
    held = c.execute(
        sa.select(mutation_records).where(
            _R.account_id.in_(sorted({target.account_id for target, _ in asked})),
            _R.stored_email_id.in_(sorted({email for email, _ in named})),
            _R.requester == requester,
            _R.request_id == request_id,
        )
    ).all()
    if held:
        answered = retried([record_of(row) for row in held], named, digest)
        if answered is None:
            raise RequestIdentityTaken
        return answered
    return [_write(c, t, requester, request_id, m, digest, now) for t, m in asked]


def _write(
    c: sa.Connection,
    target: MutationTarget,
    requester: str,
    request_id: str,
    mutation: RequestedMutation,
    digest: str,
    now: datetime,
) -> MutationRecord:
    values = {
        "record_id": uuid.uuid4(),
        "kind": mutation.kind.value,
        "account_id": target.account_id,
        "stored_email_id": target.stored_email_id,
        "folder_id": target.folder_id,
        "value": mutation.value,
        "requester": requester,
        "request_id": request_id,
        "request_digest": digest,
        "state": MutationState.PENDING.value,
        "attempts": 0,
        "last_error_code": None,
        "created_at": now,
        "updated_at": now,
    }
    c.execute(mutation_records.insert().values(**values))
    show_locally(c, target.account_id, target.stored_email_id, mutation)
    return record_of(values)


def show_locally(
    c: sa.Connection, account_id: str, stored_email_id: uuid.UUID, mutation: RequestedMutation
) -> None:
    """The local copy shows the asked value at once; synchronization later reads back what
    the server holds. A message no longer stored has nothing to show, nor has a move: the
    row follows the message only once the server holds it in its new folder."""
    if mutation.kind is MutationKind.MOVE:
        return
    seq = c.execute(
        sa.select(_M.seq).where(_M.account_id == account_id, _M.stored_email_id == stored_email_id)
    ).scalar_one_or_none()
    if seq is None:
        return
    kind = mutation.kind
    mine = messages.update().where(_M.account_id == account_id, _M.seq == seq)
    held_words = (keywords.c.account_id == account_id, keywords.c.seq == seq)
    if kind is MutationKind.SET_SEEN:
        c.execute(mine.values(seen=mutation.value == "true"))
        return
    if kind is MutationKind.SET_FLAGGED:
        c.execute(mine.values(flagged=mutation.value == "true"))
        return
    named = keywords_of(mutation.value)
    held = {
        k: k.casefold()
        for k in c.execute(sa.select(keywords.c.keyword).where(*held_words)).scalars()
    }
    if kind is MutationKind.REMOVE_KEYWORDS or kind is MutationKind.SET_KEYWORDS:
        drop = [
            k
            for k, folded in held.items()
            if (folded in named) == (kind is MutationKind.REMOVE_KEYWORDS)
        ]
        if drop:
            c.execute(keywords.delete().where(*held_words, keywords.c.keyword.in_(drop)))
    if kind is MutationKind.ADD_KEYWORDS or kind is MutationKind.SET_KEYWORDS:
        present = set(held.values())
        added = [
            {"account_id": account_id, "seq": seq, "keyword": k}
            for k in sorted(named)
            if k not in present
        ]
        if added:
            c.execute(keywords.insert(), added)


def record_of(row: Any) -> MutationRecord:
    m: Mapping[str, Any] = row if isinstance(row, dict) else row._mapping
    return MutationRecord(
        record_id=m["record_id"],
        kind=MutationKind(m["kind"]),
        account_id=m["account_id"],
        stored_email_id=m["stored_email_id"],
        folder_id=m["folder_id"],
        value=m["value"],
        requester=m["requester"],
        request_id=m["request_id"],
        state=MutationState(m["state"]),
        attempts=m["attempts"],
        last_error_code=m["last_error_code"],
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        request_digest=m["request_digest"],
    )
