"""Lexical search over the store: the best matches in scope, ranked by the full-text index.

SQLite ranks with FTS5's bm25, which exists only inside a full-text query and reads every
match's term positions and length to score it. Joining every match to `messages` for the
scope and the tie-break, and sorting them all, used to cost as much again, so the index
first keeps the best few hundred matches by score alone; only those are checked against the
scope. The window is exact, not a sample: it is widened, and finally replaced by the
statement over every match, whenever the matches it left out could still belong among the
results (fewer than `limit` survived the scope, or the last result ties the worst score the
window holds).

A word found in at least half of the indexed mail (on PostgreSQL: of the accounts searched)
carries no weight in bm25 (its inverse document frequency is zero or less, which FTS5
replaces with a token 1e-6). A query made only of such words has nothing to rank by, so
every match ranks 0 and the newest come first: the timeline of the scope, narrowed to the
matches, read newest first and stopped when the page is full, instead of scoring most of the
mailbox to order it by noise.

PostgreSQL combines its GIN index with the folder filter itself and computes ts_rank only
for rows in scope.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from mailfathom.adapters.sql.index_queries import (
    BM25,
    fts5_phrases,
    fts5_query,
    index_matching,
    tsquery,
)
from mailfathom.adapters.sql.reading_rows import among
from mailfathom.adapters.sql.schema import message_search, messages, same_message, search_versions

# The first window keeps this many matches (at least), and each widening multiplies it by
# _GROWTH; past _WIDEST the statement over every match is cheaper than another window.
_FIRST_WINDOW = 200
_GROWTH = 8
_WIDEST = 12_800

_NEWEST = (messages.c.received_at.desc().nulls_last(), messages.c.seq.desc())


class Match(NamedTuple):
    seq: int
    rank: float


class _Candidate(NamedTuple):
    seq: int
    received_at: datetime | None
    score: float


def _best_first(candidates: list[_Candidate]) -> list[_Candidate]:
    """By score (bm25: lower is better), then newest received (unknown last), then `seq`."""
    ordered = sorted(candidates, key=lambda c: c.seq, reverse=True)
    # reverse=True keeps equal keys in their previous order, so each pass breaks the ties
    # of the next one.
    ordered.sort(
        key=lambda c: (c.received_at is not None, c.received_at or datetime.min), reverse=True
    )
    ordered.sort(key=lambda c: c.score)
    return ordered


# What a word's frequency is counted under, and the state of the index it was counted in.
# SQLite: FTS5's bm25 weighs a word over the whole index, so the rule counts there too, under
# how many rows the index holds, its highest row and the changes every account's rows saw
# (three subqueries: SQLite counts a table from its B-tree alone and finds the highest id with
# one descent, where one SELECT of both would walk every row). PostgreSQL: over the rows of
# the accounts searched, under their counters, an indexed read of one row per account.
_SQLITE_STATE = sa.text(
    "SELECT (SELECT count(*) FROM message_fts_docsize), "
    "(SELECT coalesce(max(id), 0) FROM message_fts_docsize), "
    "(SELECT coalesce(sum(changes), 0) FROM search_versions)"
)
_V = search_versions.c


def _postgresql_state(accounts: Sequence[str]) -> sa.Select[Any]:
    return sa.select(
        sa.func.coalesce(sa.func.sum(_V.rows), 0), sa.func.coalesce(sa.func.sum(_V.changes), 0)
    ).where(among(True, _V.account_id, accounts))


class CommonWords:
    """Which words occur in at least half of the indexed rows (on PostgreSQL, of the accounts
    searched), remembered for the state of the index they were counted in.

    FTS5 keeps no document frequency per word (Xapian and Lucene do); counting one walks the
    word's list of rows. The answer changes only when the index does, so it is kept per word
    (and accounts) with the index state and counted again once that state has moved on."""

    def __init__(self, capacity: int = 4096) -> None:
        self._capacity = capacity
        self._known: OrderedDict[tuple[str, tuple[str, ...], str], tuple[tuple[int, ...], bool]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def all_common(
        self, connection: sa.Connection, words: Sequence[str], accounts: Sequence[str]
    ) -> bool:
        dialect = connection.dialect.name
        scope: tuple[str, ...] = ()
        if dialect == "postgresql":
            scope = tuple(sorted(set(accounts)))
            found = connection.execute(_postgresql_state(scope)).one()
        else:
            found = connection.execute(_SQLITE_STATE).one()
        state = tuple(int(v) for v in found)
        half = (state[0] + 1) // 2
        if state[0] <= 0:
            return False
        for word in words:
            key = (dialect, scope, word)
            with self._lock:
                known = self._known.get(key)
                if known is not None:
                    self._known.move_to_end(key)
            if known is not None and known[0] == state:
                common = known[1]
            else:
                common = _occurrences(connection, word, scope, half) >= half
                with self._lock:
                    self._known[key] = (state, common)
                    self._known.move_to_end(key)
                    while len(self._known) > self._capacity:
                        self._known.popitem(last=False)
            if not common:
                return False
        return True


_SQLITE_OCCURRENCES = sa.text(
    "SELECT count(*) FROM (SELECT 1 FROM message_fts WHERE message_fts MATCH :q LIMIT :n)"
)


def _occurrences(connection: sa.Connection, word: str, accounts: Sequence[str], limit: int) -> int:
    """How many indexed rows (on PostgreSQL, of `accounts`) carry `word`, counted up to
    `limit`."""
    if connection.dialect.name != "postgresql":
        found = connection.execute(_SQLITE_OCCURRENCES, {"q": fts5_phrases([word])[0], "n": limit})
        return int(found.scalar_one())
    carrying = sa.select(sa.literal(1)).where(
        among(True, message_search.c.account_id, accounts),
        message_search.c.document.bool_op("@@")(tsquery([word])),
    )
    counted = sa.select(sa.func.count()).select_from(carrying.limit(limit).subquery())
    return int(connection.execute(counted).scalar_one())


def weightless_matching(
    connection: sa.Connection,
    words: Sequence[str],
    common: CommonWords,
    accounts: Sequence[str],
) -> sa.ColumnElement[bool] | None:
    """When every word occurs in at least half of the indexed rows (where bm25's inverse
    document frequency stops being positive), the condition that a message matches them;
    otherwise None. Counting stops at half, so a common word costs half a walk of its list
    and a rare one its whole, short, list. The rule is applied on PostgreSQL as well, whose
    ts_rank weighs no word by its frequency, so that both stores answer such a query alike;
    there over the rows of the accounts searched (`CommonWords`), so what one search costs
    does not grow with every other account's mail, and for a deployment of one account (or
    a search of every account) both stores count the same rows."""
    if not common.all_common(connection, words, accounts):
        return None
    return index_matching(connection.dialect.name, words)


def _scored(query: str, name: str, size: int | None = None) -> Any:
    """The matches of `query` with their bm25 score, the `size` best of them when given, as a
    materialized CTE: bm25 exists only inside the full-text query itself."""
    sql = f"SELECT rowid AS seq, {BM25} AS score FROM message_fts WHERE message_fts MATCH :q"
    statement = sa.text(sql if size is None else sql + " ORDER BY score LIMIT :k")
    bound = statement.bindparams(q=query) if size is None else statement.bindparams(q=query, k=size)
    return bound.columns(seq=sa.Integer, score=sa.Float).cte(name).prefix_with("MATERIALIZED")


InScope = Callable[[sa.FromClause], Sequence[sa.ColumnElement[bool]]]
"""The conditions a match in scope passes, given the matches a statement holds (a CTE with a
`seq` column): a condition asking whether another row matches looks there first."""


def _window(query: str, where: InScope, size: int) -> sa.Select[Any]:
    """The `size` best matches by score, each with its received time and whether it lies in
    scope. The scope is a computed column rather than a condition, so that SQLite looks each
    match up by primary key instead of walking a folder's index in search of them."""
    best = _scored(query, "best", size)
    in_scope = sa.case((sa.and_(*where(best)), sa.true()), else_=sa.false())
    return (
        sa.select(best.c.seq, best.c.score, messages.c.received_at, in_scope.label("kept"))
        .select_from(best.join(messages, messages.c.seq == best.c.seq))
        .order_by(best.c.score)
    )


def sqlite_matches(
    connection: sa.Connection, terms: Sequence[str], where: InScope, limit: int
) -> list[Match]:
    query = fts5_query(terms)
    size = max(_FIRST_WINDOW, limit * 4)
    while size <= _WIDEST:
        window = connection.execute(_window(query, where, size)).all()
        ranked = _best_first(
            [_Candidate(int(w.seq), w.received_at, float(w.score)) for w in window if w.kept]
        )
        if len(window) < size:  # every match was in the window
            return [Match(c.seq, -c.score) for c in ranked[:limit]]
        worst = max(float(w.score) for w in window)
        if len(ranked) >= limit and ranked[limit - 1].score < worst:
            return [Match(c.seq, -c.score) for c in ranked[:limit]]
        size *= _GROWTH
    return _every_match(connection, query, where, limit)


def _every_match(connection: sa.Connection, query: str, where: InScope, limit: int) -> list[Match]:
    hits = _scored(query, "hits")
    statement = (
        sa.select(messages.c.seq, hits.c.score)
        .select_from(hits.join(messages, messages.c.seq == hits.c.seq))
        .where(*where(hits))
        .order_by(hits.c.score, *_NEWEST)
        .limit(limit)
    )
    return [Match(int(seq), -float(s)) for seq, s in connection.execute(statement)]


def postgresql_matches(
    connection: sa.Connection,
    terms: Sequence[str],
    where: Sequence[sa.ColumnElement[bool]],
    limit: int,
) -> list[Match]:
    query = tsquery(terms)
    rank: Any = sa.func.ts_rank(message_search.c.document, query, type_=sa.Float).label("rank")
    statement = (
        sa.select(messages.c.seq, rank)
        .join(message_search, same_message(message_search, messages))
        .where(message_search.c.document.bool_op("@@")(query), *where)
        .order_by(rank.desc(), *_NEWEST)
        .limit(limit)
    )
    return [Match(int(seq), float(r)) for seq, r in connection.execute(statement)]
