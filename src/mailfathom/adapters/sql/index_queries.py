"""The full-text index as SQL: which messages carry a set of words, on either database.

Words from a request are never read as index syntax: PostgreSQL gets each word as a phrase of
its own (`phraseto_tsquery`), SQLite's FTS5 each word as a quoted string.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import TSQUERY
from sqlalchemy.sql.selectable import NamedFromClause

from mailfathom.adapters.sql.rows import text_value
from mailfathom.adapters.sql.schema import message_search, messages, same_message

# Weights of the FTS5 columns (subject, participants, body), as PostgreSQL weighs A, B, C.
BM25 = "bm25(message_fts, 10.0, 5.0, 1.0)"


def index_matching(
    dialect: str, words: Sequence[str], rows: NamedFromClause = messages
) -> sa.ColumnElement[bool]:
    """The message of `rows` (`messages` or an alias of it) carries every one of `words`, as
    the index reads them."""
    if dialect == "postgresql":
        index: sa.TableClause = message_search
        found = sa.exists().where(
            same_message(message_search, rows),
            message_search.c.document.bool_op("@@")(tsquery(words)),
        )
    else:
        index = sa.table("message_fts", sa.column("rowid"))
        # Unique, so that two sets of words can be asked in one statement.
        query: sa.BindParameter[str] = sa.bindparam("fts_words", fts5_query(words), unique=True)
        matched = sa.text("message_fts MATCH :fts_words").bindparams(query)
        found = sa.exists().where(matched, index.c.rowid == rows.c.seq)
    # The index is the condition's own even where the statement around it reads the index.
    return found.correlate_except(index)


def searchable(words: Sequence[str]) -> list[str]:
    """Words that carry something to look up. A word of punctuation alone holds no token on
    either database; it is dropped rather than made to match nothing."""
    return [text_value(w) for w in words if any(ch.isalnum() for ch in w)]


def tsquery(words: Sequence[str]) -> sa.ColumnElement[Any]:
    """Each word as a phrase of its own, ANDed; phraseto_tsquery reads its text as words
    only, so no tsquery operator in it means anything."""
    phrases = [
        sa.func.phraseto_tsquery(sa.literal_column("'simple'"), sa.literal(w, sa.Text))
        for w in words
    ]
    query: sa.ColumnElement[Any] = phrases[0]
    for phrase in phrases[1:]:
        query = query.op("&&", return_type=TSQUERY)(phrase)
    return query


def fts5_phrases(words: Sequence[str]) -> list[str]:
    """Each word as a quoted FTS5 string: quoting makes operators, column filters, prefixes
    and parentheses plain text."""
    return ['"' + w.replace('"', '""') + '"' for w in words]


def fts5_query(words: Sequence[str]) -> str:
    """The words as FTS5 phrases, ANDed."""
    return " ".join(fts5_phrases(words))
