"""Each process's passage vectors in memory: a matrix per generation and account.

Each account's vectors of a generation are read once and then extended by the rows added
since (they only grow while the generation is filled; rows leave with their messages). The
store is asked only for what changed, and every statement names the accounts it reads
(docs/scaling.md): at each search the highest vector id of each account the search names, in
one statement, and every `RECOUNT_SECONDS` the number of an account's rows, which falls when
messages were removed and then makes that account's matrix be read again. A search over
several accounts ranks over their matrices as one (`scan.Ranking`).

A matrix is never changed once a search holds it: an extension makes a new one.

Matrices leave memory once no search names them for `IDLE_SECONDS`: those of a generation a
filled one replaced (the store deletes it; a search still asking for it finds none and drops
its matrices at once), of an account removed, or of one merely quiet (its vectors are read
again when it is next searched).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import sqlalchemy as sa

from mailfathom.adapters.sql.schema import (
    embedding_generations,
    messages,
    passage_vectors,
    same_message,
)
from mailfathom.adapters.vectors.codec import as_int8
from mailfathom.adapters.vectors.scan import (
    CANDIDATE_FACTOR,
    CANDIDATES,
    EXACT_MESSAGES,
    Floats,
    Part,
    Ranking,
    VectorMatrix,
)

RECOUNT_SECONDS = 30.0
IDLE_SECONDS = 600.0
_LOAD_ROWS = 20_000
# Accounts whose highest vector id one statement asks for (a subquery each).
_NEWEST_AT_ONCE = 100
# Rankings run at once per process; more would only contend for the processors.
_WORKERS = 2
_T = TypeVar("_T")
_PV = passage_vectors.c


class VectorCache:
    """Each generation's matrix of each account, shared by the reads of one store in one
    process."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        exact_messages: int = EXACT_MESSAGES,
        candidates: int = CANDIDATES,
        per_message: int = CANDIDATE_FACTOR,
    ) -> None:
        """`exact_messages`, `candidates` and `per_message` are `Ranking`'s (the module's
        published values unless told)."""
        self._clock = clock
        self._ranking = (exact_messages, candidates, per_message)
        self._lock = threading.Lock()
        # (generation, account) -> (generation id, matrix, when its rows were last counted)
        self._held: dict[tuple[str, str], tuple[int, VectorMatrix, float]] = {}
        # (generation, account) -> when a search last named it
        self._used: dict[tuple[str, str], float] = {}
        self._swept = clock()
        self._workers: ThreadPoolExecutor | None = None
        self._starting = threading.Lock()

    def ranking(self, parts: Sequence[Part], query: Floats) -> Ranking:
        exact, candidates, per_message = self._ranking
        return Ranking(
            parts, query, exact_up_to=exact, candidates=candidates, per_message=per_message
        )

    def submit(self, work: Callable[[int], _T], argument: int) -> Future[_T]:
        """`work(argument)` on one of the cache's threads (started at the first call): the
        scan releases the interpreter while it multiplies, so a search reads its lexical
        ranking from the store meanwhile."""
        with self._starting:
            if self._workers is None:
                self._workers = ThreadPoolExecutor(_WORKERS, thread_name_prefix="nearest")
            workers = self._workers
        return workers.submit(work, argument)

    def matrices(
        self, connection: sa.Connection, generation: str, accounts: Sequence[str]
    ) -> list[VectorMatrix] | None:
        """The generation's vectors of each of `accounts`, in their order, as the
        connection's snapshot holds them (None: the store has no such generation)."""
        found = _newest(connection, generation, accounts)
        with self._lock:
            self._sweep(generation if found is None else None)
            if found is None:
                return None
            generation_id, dimension, seen = found
            now = self._clock()
            for account in accounts:
                self._used[(generation, account)] = now
            return [
                self._matrix(connection, (generation, account), generation_id, dimension, newest)
                for account, newest in zip(accounts, seen, strict=True)
            ]

    def held(self) -> set[tuple[str, str]]:
        """The (generation, account) pairs whose matrices are in memory."""
        with self._lock:
            return set(self._held)

    def _sweep(self, gone: str | None) -> None:
        """Drops the matrices of `gone` (a generation the store does not hold), and every
        `RECOUNT_SECONDS` those no search has named for `IDLE_SECONDS`; under the lock."""
        now = self._clock()
        stale = set() if gone is None else {k for k in self._held if k[0] == gone}
        if now - self._swept >= RECOUNT_SECONDS:
            self._swept = now
            stale |= {k for k, used in self._used.items() if now - used >= IDLE_SECONDS}
        for key in stale:
            self._held.pop(key, None)
            self._used.pop(key, None)

    def _matrix(
        self,
        connection: sa.Connection,
        key: tuple[str, str],
        generation_id: int,
        dimension: int,
        seen: int,
    ) -> VectorMatrix:
        """One account's matrix, brought to what the snapshot holds (`seen`: the highest
        vector id it holds of the account); under the lock."""
        account = key[1]
        held = self._held.get(key)
        now = self._clock()
        if held is None or held[0] != generation_id:
            held = (generation_id, VectorMatrix(dimension), now)
        _, matrix, counted = held
        if seen < matrix.highest:
            # A snapshot older than the one the matrix was last extended in (or the newest
            # rows were removed): the rows it cannot see belong to messages it drops when
            # they are checked (`vector_reading`), so the matrix is kept for the others;
            # only removals among the rows both can see make it be read again.
            if now - counted >= RECOUNT_SECONDS:
                visible = _count(connection, generation_id, account, up_to=seen)
                if visible != matrix.held_up_to(seen):
                    matrix = _extend(connection, generation_id, account, VectorMatrix(dimension))
                counted = now
        else:
            if now - counted >= RECOUNT_SECONDS:
                stored = _count(connection, generation_id, account)
                newer = _count(connection, generation_id, account, beyond=matrix.highest)
                if stored != len(matrix) + newer:
                    matrix = VectorMatrix(dimension)
                counted = now
            if seen > matrix.highest:
                matrix = _extend(connection, generation_id, account, matrix)
        self._held[key] = (generation_id, matrix, counted)
        return matrix


def _highest(generation_id: Any, accounts: Sequence[str]) -> list[Any]:
    """The highest vector id of each of `accounts` in the generation, a subquery each (an
    index probe of `ix_passage_vectors_account`)."""
    return [
        sa.select(sa.func.max(_PV.vector_id))
        .where(_PV.generation_id == generation_id, _PV.account_id == account)
        .scalar_subquery()
        for account in accounts
    ]


def _newest(
    connection: sa.Connection, generation: str, accounts: Sequence[str]
) -> tuple[int, int, list[int]] | None:
    """The generation's id, its dimension and the highest vector id of each of `accounts`
    (0: none), in one statement for up to `_NEWEST_AT_ONCE` accounts; None when the store
    has no such generation."""
    found = embedding_generations.c
    first = accounts[:_NEWEST_AT_ONCE]
    row = connection.execute(
        sa.select(
            found.generation_id, found.dimension, *_highest(found.generation_id, first)
        ).where(found.generation == generation)
    ).one_or_none()
    if row is None:
        return None
    generation_id = int(row[0])
    seen = [int(v or 0) for v in row[2:]]
    for start in range(_NEWEST_AT_ONCE, len(accounts), _NEWEST_AT_ONCE):
        more = accounts[start : start + _NEWEST_AT_ONCE]
        rest = connection.execute(sa.select(*_highest(generation_id, more))).one()
        seen.extend(int(v or 0) for v in rest)
    return generation_id, int(row[1]), seen


def _count(
    connection: sa.Connection,
    generation_id: int,
    account_id: str,
    *,
    up_to: int | None = None,
    beyond: int | None = None,
) -> int:
    """How many of the account's rows of the generation the snapshot holds (with an id of at
    most `up_to`, or beyond `beyond`, when given)."""
    where = [_PV.generation_id == generation_id, _PV.account_id == account_id]
    if up_to is not None:
        where.append(_PV.vector_id <= up_to)
    if beyond is not None:
        where.append(_PV.vector_id > beyond)
    return int(connection.execute(sa.select(sa.func.count()).where(*where)).scalar_one())


def _extend(
    connection: sa.Connection, generation_id: int, account_id: str, matrix: VectorMatrix
) -> VectorMatrix:
    """The account's matrix and its rows of the generation beyond its highest, read in pages
    and joined once (each extension copies the whole matrix)."""
    pages: list[Sequence[Any]] = []
    after = matrix.highest
    while True:
        rows = connection.execute(
            sa.select(_PV.vector_id, _PV.seq, messages.c.folder_id, _PV.scale, _PV.vector)
            .join(messages, same_message(passage_vectors, messages))
            .where(
                _PV.generation_id == generation_id,
                _PV.account_id == account_id,
                messages.c.account_id == account_id,
                _PV.vector_id > after,
            )
            .order_by(_PV.vector_id)
            .limit(_LOAD_ROWS)
        ).all()
        if rows:
            pages.append(rows)
            after = int(rows[-1][0])
        if len(rows) < _LOAD_ROWS:
            break
    if not pages:
        return matrix
    rows = [row for page in pages for row in page]
    count = len(rows)
    return matrix.extended(
        np.fromiter((r[0] for r in rows), dtype=np.int64, count=count),
        np.fromiter((r[1] for r in rows), dtype=np.int64, count=count),
        np.fromiter((r[2] for r in rows), dtype=np.int64, count=count),
        np.fromiter((r[3] for r in rows), dtype=np.float32, count=count),
        as_int8([bytes(r[4]) for r in rows], matrix.dimension),
    )
