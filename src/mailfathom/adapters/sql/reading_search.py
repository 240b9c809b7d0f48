"""Lexical search over the store: the best matches in scope, ranked by the full-text index.

SQLite ranks with FTS5's bm25, which exists only inside a full-text query and reads every
match's term positions and length to score it. Joining every match to `messages` for the
scope and the tie-break, and sorting them all, used to cost as much again, so the index
first keeps the best few hundred matches by score alone; only those are checked against the
scope. The window is exact, not a sample: it is widened, and finally replaced by the
statement over every match, whenever the matches it left out could still belong among the
results (fewer than `limit` survived the scope, or the last result ties the worst score the
window holds).

PostgreSQL combines its GIN index with the folder filter itself and computes ts_rank only
for rows in scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from mailfathom.adapters.sql.reading_rows import BM25, fts5_query, tsquery
from mailfathom.adapters.sql.schema import message_search, messages

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


def _window(query: str, where: Sequence[sa.ColumnElement[bool]], size: int) -> sa.Select[Any]:
    """The `size` best matches by score, each with its received time and whether it lies in
    scope. The scope is a computed column rather than a condition, so that SQLite looks each
    match up by primary key instead of walking a folder's index in search of them."""
    best = (
        sa.text(
            f"SELECT rowid AS seq, {BM25} AS score FROM message_fts "
            "WHERE message_fts MATCH :q ORDER BY score LIMIT :k"
        )
        .bindparams(q=query, k=size)
        .columns(seq=sa.Integer, score=sa.Float)
        .cte("best")
        .prefix_with("MATERIALIZED")
    )
    in_scope = sa.case((sa.and_(*where), sa.true()), else_=sa.false())
    return (
        sa.select(best.c.seq, best.c.score, messages.c.received_at, in_scope.label("kept"))
        .select_from(best.join(messages, messages.c.seq == best.c.seq))
        .order_by(best.c.score)
    )


def sqlite_matches(
    connection: sa.Connection,
    terms: Sequence[str],
    where: Sequence[sa.ColumnElement[bool]],
    limit: int,
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


def _every_match(
    connection: sa.Connection, query: str, where: Sequence[sa.ColumnElement[bool]], limit: int
) -> list[Match]:
    hits = (
        sa.text(f"SELECT rowid AS seq, {BM25} AS score FROM message_fts WHERE message_fts MATCH :q")
        .bindparams(q=query)
        .columns(seq=sa.Integer, score=sa.Float)
        .cte("hits")
        .prefix_with("MATERIALIZED")
    )
    statement = (
        sa.select(messages.c.seq, hits.c.score)
        .select_from(hits.join(messages, messages.c.seq == hits.c.seq))
        .where(*where)
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
        .join(message_search, message_search.c.seq == messages.c.seq)
        .where(message_search.c.document.bool_op("@@")(query), *where)
        .order_by(rank.desc(), *_NEWEST)
        .limit(limit)
    )
    return [Match(int(seq), float(r)) for seq, r in connection.execute(statement)]
