"""The nearest messages to a query among those a search may return, on either database.

The vectors come from the process's `VectorCache` (vector_cache.py): a matrix per generation
and account, kept up to date by statements that each name their account; a search ranks over
the matrices of the accounts its folders belong to, as one ranking, and never reads another
account's.

Which rows may answer comes from the same conditions the lexical path applies (folders in
scope, the filters, one row per message): the scope is matched against the folder each row
was stored in (a message never changes folder: a move stores a new row); a filter is asked
of `messages`, before the scan when it leaves few messages, after it otherwise
(`FEW_ELIGIBLE`). Either way the best messages are checked against `messages` before they
are answered, so a message removed since a matrix was read is never named.

The ranking itself (`adapters/vectors/scan.py`) runs on a thread of the cache while the
search reads its lexical ranking on its own connection; every statement stays on the
caller's thread, before the ranking starts and after it ends. A matrix is never changed
once a search holds it: an extension makes a new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np
import sqlalchemy as sa

from mailfathom.adapters.sql.reading_rows import among, arrays, chunks, named_folder
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.vector_cache import VectorCache
from mailfathom.adapters.vectors.scan import EXACT_MESSAGES, Part, Ranking, unit_query
from mailfathom.app.shared.vector_ports import Nearest

# A filter leaving at most this many messages is applied before the scan (only their
# messages are ranked, exactly: `EXACT_MESSAGES`); one leaving more is checked on the best
# messages as they are read off the ranking, which then goes deeper until enough pass.
FEW_ELIGIBLE = EXACT_MESSAGES


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
    if window <= 0 or not scope:
        return NearestFound([])
    named_accounts = sorted(set(accounts))
    matrices = cache.matrices(connection, generation, named_accounts)
    if not matrices:
        return NearestFound([])
    query = unit_query(list(query_vector), matrices[0].dimension)
    if query is None:
        return NearestFound([])
    folders = sorted(scope)
    array = arrays(connection)
    # Every statement on the scope's messages names the accounts its folders belong to.
    of_accounts = among(array, messages.c.account_id, named_accounts)
    in_folders = np.asarray(folders, dtype=np.int64)
    parts: list[Part] = [(m, np.isin(m.index.folder_ids, in_folders)) for m in matrices]
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
            few = np.asarray(named, dtype=np.int64)
            parts = [(m, allowed & np.isin(m.index.seqs, few)) for m, allowed in parts]
        else:
            checked = filters
    ranking = cache.ranking(parts, query)
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
