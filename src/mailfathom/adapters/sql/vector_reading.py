"""The nearest messages to a query among those a search may return, on either database.

Each process keeps each generation's vectors in memory (`VectorCache`), read once and then
extended by the rows added since (a generation's vectors only grow while it is filled; rows
leave with their messages). The store is asked only for what changed: the highest vector id
at each search, and every `RECOUNT_SECONDS` the number of rows, which falls when messages
were removed and then makes the matrix be read again.

Which rows may answer comes from the same conditions the lexical path applies (folders in
scope, the filters, one row per message): the scope is matched against the folder each row
was stored in (a message never changes folder: a move stores a new row); a filter is asked
of `messages`, before the scan when it leaves few messages, after it otherwise
(`FEW_ELIGIBLE`). Either way the best messages are checked against `messages` before they
are answered, so a message removed since the matrix was read is never named.

The ranking itself (`adapters/vectors/scan.py`) runs on a thread of the cache while the
search reads its lexical ranking on its own connection; every statement stays on the
caller's thread, before the ranking starts and after it ends. A matrix is never changed
once a search holds it: an extension makes a new one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import sqlalchemy as sa

from mailfathom.adapters.sql.reading_rows import among, arrays, chunks, named_folder
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
    Ranking,
    VectorMatrix,
    unit_query,
)
from mailfathom.app.shared.vector_ports import Nearest

RECOUNT_SECONDS = 30.0
# A filter leaving at most this many messages is applied before the scan (only their
# messages are ranked, exactly: `EXACT_MESSAGES`); one leaving more is checked on the best
# messages as they are read off the ranking, which then goes deeper until enough pass.
FEW_ELIGIBLE = EXACT_MESSAGES
_LOAD_ROWS = 20_000
# Rankings run at once per process; more would only contend for the processors.
_WORKERS = 2
_T = TypeVar("_T")
_PV = passage_vectors.c


class VectorCache:
    """Each generation's matrix, shared by the reads of one store in one process."""

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
        self._held: dict[str, tuple[int, VectorMatrix, float]] = {}
        self._workers: ThreadPoolExecutor | None = None
        self._starting = threading.Lock()

    def ranking(
        self, matrix: VectorMatrix, query: Floats, allowed: npt.NDArray[np.bool_]
    ) -> Ranking:
        exact, candidates, per_message = self._ranking
        return Ranking(
            [(matrix, allowed)],
            query,
            exact_up_to=exact,
            candidates=candidates,
            per_message=per_message,
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

    def matrix(self, connection: sa.Connection, generation: str) -> VectorMatrix | None:
        """The generation's vectors as the connection's snapshot holds them (None: the store
        has no such generation)."""
        found = embedding_generations.c
        newest = (
            sa.select(sa.func.max(_PV.vector_id))
            .where(_PV.generation_id == found.generation_id)
            .scalar_subquery()
        )
        row = connection.execute(
            sa.select(found.generation_id, found.dimension, newest).where(
                found.generation == generation
            )
        ).one_or_none()
        if row is None:
            return None
        generation_id, dimension, seen = int(row[0]), int(row[1]), int(row[2] or 0)
        mine = _PV.generation_id == generation_id
        with self._lock:
            held = self._held.get(generation)
            now = self._clock()
            if held is None or held[0] != generation_id:
                held = (generation_id, VectorMatrix(dimension), now)
            _, matrix, counted = held
            if seen < matrix.highest:
                # A snapshot older than the one the matrix was last extended in (or the
                # newest rows were removed): the rows it cannot see belong to messages it
                # drops when they are checked (`_passing`), so the matrix is kept for the
                # others; only removals among the rows both can see make it be read again.
                if now - counted >= RECOUNT_SECONDS:
                    if _visible(connection, mine, seen) != matrix.held_up_to(seen):
                        matrix = _extend(connection, generation_id, VectorMatrix(dimension))
                    counted = now
                self._held[generation] = (generation_id, matrix, counted)
                return matrix
            if now - counted >= RECOUNT_SECONDS:
                stored = connection.execute(sa.select(sa.func.count()).where(mine)).scalar_one()
                if int(stored) != len(matrix) + _newer(connection, generation_id, matrix):
                    matrix = VectorMatrix(dimension)
                counted = now
            if seen > matrix.highest:
                matrix = _extend(connection, generation_id, matrix)
            self._held[generation] = (generation_id, matrix, counted)
            return matrix


def _visible(connection: sa.Connection, mine: sa.ColumnElement[bool], highest: int) -> int:
    return int(
        connection.execute(
            sa.select(sa.func.count()).where(mine, _PV.vector_id <= highest)
        ).scalar_one()
    )


def _newer(connection: sa.Connection, generation_id: int, matrix: VectorMatrix) -> int:
    return int(
        connection.execute(
            sa.select(sa.func.count()).where(
                _PV.generation_id == generation_id, _PV.vector_id > matrix.highest
            )
        ).scalar_one()
    )


def _extend(connection: sa.Connection, generation_id: int, matrix: VectorMatrix) -> VectorMatrix:
    """The matrix and the generation's rows beyond its highest, read in pages and joined
    once (each extension copies the whole matrix)."""
    pages: list[Sequence[Any]] = []
    after = matrix.highest
    while True:
        rows = connection.execute(
            sa.select(_PV.vector_id, _PV.seq, messages.c.folder_id, _PV.scale, _PV.vector)
            .join(messages, same_message(passage_vectors, messages))
            .where(_PV.generation_id == generation_id, _PV.vector_id > after)
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


def start_nearest(
    connection: sa.Connection,
    cache: VectorCache,
    generation: str,
    query_vector: Sequence[float],
    scope: Sequence[int],
    accounts: Sequence[str],
    filters: Sequence[sa.ColumnElement[bool]],
    window: int,
    standing: Sequence[sa.ColumnElement[bool]] = (),
) -> NearestUnderWay | NearestFound:
    """Up to `window` messages of `scope` (folders of `accounts`) passing `filters`, nearest
    first (see module), ranked on one of the cache's threads while the caller goes on using
    `connection`: the statements are all made here and in `NearestUnderWay.result`, on the
    caller's thread.
    `standing` (that a row stands for its message among copies) is asked only of the
    nearest rows as they are read off the ranking, never of every eligible one: as a
    correlated condition over the whole scope it costs far more than the scan."""
    matrix = cache.matrix(connection, generation)
    if matrix is None or window <= 0 or not scope:
        return NearestFound([])
    query = unit_query(list(query_vector), matrix.dimension)
    if query is None:
        return NearestFound([])
    folders = sorted(scope)
    array = arrays(connection)
    # Every statement on the scope's messages names the accounts its folders belong to.
    of_accounts = among(array, messages.c.account_id, sorted(set(accounts)))
    index = matrix.index
    allowed = np.isin(index.folder_ids, np.asarray(folders, dtype=np.int64))
    checked: Sequence[sa.ColumnElement[bool]] = ()
    if filters:
        named = (
            connection.execute(
                sa.select(messages.c.seq)
                .where(of_accounts, among(array, messages.c.folder_id, folders), *filters)
                .limit(FEW_ELIGIBLE + 1)
            )
            .scalars()
            .all()
        )
        if len(named) <= FEW_ELIGIBLE:
            allowed &= np.isin(index.seqs, np.asarray(named, dtype=np.int64))
        else:
            checked = filters
    ranking = cache.ranking(matrix, query, allowed)
    return NearestUnderWay(
        connection,
        ranking,
        window,
        [of_accounts, among(array, named_folder(messages.c.folder_id), folders)],
        [*checked, *standing],
        cache.submit(ranking.best, window),
    )


class NearestUnderWay:
    """A ranking under way; `result` waits for it and checks its best messages against the
    store, going deeper until `window` pass (on the caller's thread and connection)."""

    def __init__(
        self,
        connection: sa.Connection,
        ranking: Ranking,
        window: int,
        in_scope: Sequence[sa.ColumnElement[bool]],
        checked: Sequence[sa.ColumnElement[bool]],
        first: Future[list[tuple[int, float]]],
    ) -> None:
        """`in_scope`: the conditions that a message lies in the search's folders."""
        self._connection = connection
        self._ranking = ranking
        self._window = window
        self._in_scope = in_scope
        self._checked = checked
        self._first = first

    def result(self) -> list[Nearest]:
        window = wanted = self._window
        found = self._first.result()
        while True:
            seqs = [seq for seq, _ in found]
            passing = _passing(self._connection, seqs, self._in_scope, self._checked)
            kept = [Nearest(seq, score) for seq, score in found if seq in passing]
            if len(kept) >= window or len(found) < wanted:
                return kept[:window]
            wanted *= 4
            found = self._ranking.best(wanted)


class NearestFound:
    """A ranking already done."""

    def __init__(self, found: list[Nearest]) -> None:
        self._found = found

    def result(self) -> list[Nearest]:
        return self._found


def _passing(
    connection: sa.Connection,
    seqs: list[int],
    in_scope: Sequence[sa.ColumnElement[bool]],
    filters: Sequence[sa.ColumnElement[bool]],
) -> set[int]:
    """Which of `seqs` are still stored in the scope and pass `filters`."""
    found: set[int] = set()
    array = arrays(connection)
    for chunk in chunks(seqs):
        statement: Any = sa.select(messages.c.seq).where(
            among(array, messages.c.seq, chunk), *in_scope, *filters
        )
        found.update(int(s) for s in connection.execute(statement).scalars())
    return found
