"""Fencing the writes of work done under a lease: `StoreFencing`.

A worker runs an account's synchronization (its passes, the owner changes it carries, the
drafts-folder upkeep, the trust readings) inside `fenced(...)`. From then on, every write
transaction begun in that context, on an engine this module was installed on, first reads
the lease row and goes on only if the worker still holds it under the same fence. The check
is made before the transaction's first INSERT, UPDATE or DELETE, whatever code issues it, so
no write path of the work can forget it:

- PostgreSQL: the row is read `FOR SHARE` and stays locked until the transaction ends. A
  takeover (an UPDATE of the row, after expiry) waits for that transaction to commit, and any
  transaction the old holder begins afterwards finds the new holder and is refused. Writes of
  the old holder therefore all come before the takeover commits.
- SQLite: every write transaction begins IMMEDIATE, holding the only write lock, so the check
  and the writes that follow it cannot interleave with a takeover either.

A refused write raises `LeaseLost` (nothing of that transaction is written) and calls the
fence's `on_lost`, which stops the account's run at once.

Only the store's engine is fenced. The content packs a pass writes beside it are addressed by
the SHA-256 of what they hold: bytes a former holder appends are either the same bytes the new
holder stores, or bytes no row names. Deleting content is not harmless that way (the new
holder may have just named the same content from a row), so a pass rechecks its lease before
it deletes any (`app.sync.lease_recheck`). Helper threads of a pass (IMAP fetches, sender
checks) make no store writes.

The context is a `contextvars` value: threads the work starts must run in a copy of it
(`mailfathom.app.shared.context_threads`), as the synchronization's threads do.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from mailfathom.app.sync.lease_ports import Lease
from mailfathom.domain.errors import LeaseLost


@dataclass(frozen=True, slots=True, eq=False)
class _Fence:
    worker: str
    lease: Lease
    on_lost: Callable[[], None]


_CURRENT: contextvars.ContextVar[_Fence | None] = contextvars.ContextVar(
    "mailfathom_fence", default=None
)
_CHECKED = "mailfathom_fence_checked"
_WRITE = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE|MERGE|UPSERT)\b", re.IGNORECASE)
_INSTALLED = "mailfathom_fencing"
_CHECK = (
    "SELECT 1 FROM work_leases WHERE kind = {p} AND subject = {p} AND holder = {p} AND fence = {p}"
)


class StoreFencing:
    """`Fencing` over one engine (installs the check on it once)."""

    def __init__(self, engine: sa.Engine) -> None:
        install_fencing(engine)

    @contextlib.contextmanager
    def fenced(self, worker: str, lease: Lease, on_lost: Callable[[], None]) -> Iterator[None]:
        token = _CURRENT.set(_Fence(worker, lease, on_lost))
        try:
            yield
        finally:
            _CURRENT.reset(token)


def install_fencing(engine: sa.Engine) -> None:
    """Check the current fence before the first write of every transaction on `engine`."""
    if engine.dialect.name not in ("sqlite", "postgresql"):
        raise ValueError("fencing is written for SQLite and PostgreSQL")
    with contextlib.suppress(AttributeError):
        if getattr(engine, _INSTALLED):
            return
    setattr(engine, _INSTALLED, True)
    query = _CHECK.format(p="?" if engine.dialect.name == "sqlite" else "%s")
    if engine.dialect.name == "postgresql":
        query += " FOR SHARE"

    @event.listens_for(engine, "before_cursor_execute")
    def _check(
        conn: sa.Connection,
        cursor: Any,
        statement: str,
        parameters: Any,
        context: Any,
        executemany: bool,
    ) -> None:
        fence = _CURRENT.get()
        if fence is None:
            return
        transaction = conn.get_transaction()
        if conn.info.get(_CHECKED) == (fence, transaction):
            return
        if not _writes(statement, context):
            return
        lease = fence.lease
        check = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            check.execute(query, (lease.kind.value, lease.subject, fence.worker, lease.fence))
            held = check.fetchone() is not None
        finally:
            check.close()
        if not held:
            fence.on_lost()
            raise LeaseLost("This worker no longer holds the lease; nothing was written.")
        conn.info[_CHECKED] = (fence, transaction)

    @event.listens_for(engine, "commit")
    @event.listens_for(engine, "rollback")
    def _forget(conn: sa.Connection) -> None:
        conn.info.pop(_CHECKED, None)


def _writes(statement: str, context: Any) -> bool:
    if context is not None and (context.isinsert or context.isupdate or context.isdelete):
        return True
    return _WRITE.match(statement) is not None
