"""Keeping the lexical index in step with stored messages.

SQLite: an FTS5 table whose rowid is the message's `seq`. PostgreSQL: a tsvector per message
under the `simple` configuration (no stemming, no stop words: one index serves mail in every
language), weighted subject > participants > body.

Every change to an account's index rows moves its `search_versions` row in the same
transaction: on PostgreSQL by triggers (migration 0036), on SQLite here, since FTS5 takes none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

# Bodies beyond this many characters are indexed up to it: PostgreSQL refuses a tsvector over
# 1 MB, and both stores keep the same rule so a search means the same thing on either.
INDEXED_BODY_CHARACTERS = 200_000


@dataclass(frozen=True, slots=True)
class IndexDocument:
    account_id: str
    seq: int
    subject: str
    participants: str
    # UTF-8 octets where the text arrived encoded (see `PreparedMessage.stored_text`).
    body: str | bytes


_PG_INSERT = (
    "INSERT INTO message_search (account_id, seq, document) VALUES (%s, %s, "
    "setweight(to_tsvector('simple', %s), 'A') || "
    "setweight(to_tsvector('simple', %s), 'B') || "
    "setweight(to_tsvector('simple', %s), 'C')) "
    "ON CONFLICT (account_id, seq) DO NOTHING"
)
_SQLITE_INSERT = "INSERT INTO message_fts (rowid, subject, participants, body) VALUES (?, ?, ?, ?)"


def index_documents(connection: sa.Connection, documents: Sequence[IndexDocument]) -> None:
    if not documents:
        return
    postgresql = connection.dialect.name == "postgresql"
    if postgresql:
        connection.exec_driver_sql(
            _PG_INSERT,
            [
                (
                    d.account_id,
                    d.seq,
                    d.subject,
                    d.participants,
                    _indexed_body(d.body, as_text=True),
                )
                for d in documents
            ],
        )
        return
    rows = [
        (d.seq, d.subject, d.participants, _indexed_body(d.body, as_text=False)) for d in documents
    ]
    connection.exec_driver_sql(_SQLITE_INSERT, rows)
    for account_id, count in Counter(d.account_id for d in documents).items():
        _moved(connection, account_id, count, count)


_SQLITE_MOVED = sa.text(
    "INSERT INTO search_versions (account_id, rows, changes) VALUES (:account, :rows, :changes) "
    "ON CONFLICT (account_id) DO UPDATE SET rows = search_versions.rows + excluded.rows, "
    "changes = search_versions.changes + excluded.changes"
)


def _moved(connection: sa.Connection, account_id: str, rows: int, changes: int) -> None:
    """SQLite: the account's index rows grew by `rows` (fewer when negative) in `changes`."""
    connection.execute(_SQLITE_MOVED, {"account": account_id, "rows": rows, "changes": changes})


def _indexed_body(body: str | bytes, *, as_text: bool) -> str | bytes:
    """The part of a body the index takes. FTS5 reads UTF-8 octets as the text they encode,
    so encoded text goes to it as it is; PostgreSQL wants text."""
    if isinstance(body, bytes):
        if len(body) <= INDEXED_BODY_CHARACTERS and not as_text:
            return body  # no more characters than octets
        body = body.decode("utf-8")
    return body[:INDEXED_BODY_CHARACTERS]


_SQLITE_DELETE = sa.text("DELETE FROM message_fts WHERE rowid IN :seqs").bindparams(
    sa.bindparam("seqs", expanding=True)
)


def unindex(connection: sa.Connection, account_id: str, seqs: Sequence[int]) -> None:
    """Remove an account's index rows. PostgreSQL's rows go with the message by cascade."""
    if not seqs or connection.dialect.name == "postgresql":
        return
    removed = connection.execute(_SQLITE_DELETE, {"seqs": list(seqs)}).rowcount
    if removed:
        _moved(connection, account_id, -removed, removed)


def replace_document(connection: sa.Connection, document: IndexDocument) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(
            sa.text("DELETE FROM message_search WHERE account_id = :account AND seq = :seq"),
            {"account": document.account_id, "seq": document.seq},
        )
    else:
        unindex(connection, document.account_id, [document.seq])
    index_documents(connection, [document])
