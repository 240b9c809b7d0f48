"""The filters of a listing or a search as SQL, written on the rows a query reads.

A filter is written on a table of messages: `messages` itself, or an alias of it standing for
another copy of the same message, whose filters a read over several folders asks as well
(`message_copies`). Where SQLite has two ways to write a filter and asks the data which one
fits, it asks once per request (`RowFilters.of`) and writes every table the same way.

Text from a request is compared as the writer stored text: without NUL characters, which
PostgreSQL refuses and the writer drops (`rows.text_value`).

Case-insensitive comparisons fold text by the same rule on both databases as far as they can:
SQLite's own `lower()` folds ASCII only, so the reader registers Python's `str.lower` on its
connections; PostgreSQL folds with the ICU root locale when the server has ICU, because its
plain `lower()` follows the database's LC_CTYPE, which under the C locale is ASCII only too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.selectable import NamedFromClause

from mailfathom.adapters.sql.engine import SQLITE_FOLD_FUNCTION
from mailfathom.adapters.sql.index_queries import index_matching, searchable
from mailfathom.adapters.sql.reading_rows import account_per_row, among
from mailfathom.adapters.sql.rows import text_value
from mailfathom.adapters.sql.schema import keywords, messages, participants, same_message
from mailfathom.app.shared.stored_mail import SummaryFilter

# address_key is cut to this length when written (see rows.py), so a lookup is cut alike.
_MAX_ADDRESS = 998
# Past this many messages naming an address (_named_as) or sent in a range (_sent_within),
# SQLite checks the condition per row as it reads the timeline.
_SHORT_LIST = 2000
ICU_ROOT_COLLATION = "und-x-icu"
_RECIPIENT_ROLES = ("to", "cc")


@dataclass(frozen=True, slots=True)
class TextRules:
    """How this database folds case and finds a substring (see the module docstring)."""

    dialect: str
    icu: bool = False

    def fold(self, expression: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        if self.dialect == "sqlite":
            return sa.Function(SQLITE_FOLD_FUNCTION, expression, type_=sa.Text)
        if self.icu:
            return sa.func.lower(expression.collate(ICU_ROOT_COLLATION), type_=sa.Text)
        return sa.func.lower(expression, type_=sa.Text)

    def contains(self, column: sa.ColumnElement[Any], fragment: str) -> sa.ColumnElement[bool]:
        """`fragment` anywhere in `column`, ignoring case; instr/strpos take it as plain text,
        so `%`, `_` and backslashes are never wildcards or escapes."""
        position = sa.func.instr if self.dialect == "sqlite" else sa.func.strpos
        needle = self.fold(sa.literal(fragment, sa.Text))
        return position(self.fold(column), needle, type_=sa.Integer) > 0


def address_key(address: str) -> str:
    return text_value(address).lower()[:_MAX_ADDRESS]


def _carries_keyword(rows: NamedFromClause, keyword: str) -> sa.ColumnElement[bool]:
    """The message carries `keyword` (given lower-cased), in whatever case it was stored.

    The writer stores keywords already folded (`RemoteFlags` folds them), so the plain
    equality is what matches in practice, and it lets PostgreSQL estimate from the column's
    statistics whether the keyword is common; `lower()` catches rows written otherwise. It
    folds ASCII only on SQLite, which is enough: IMAP keywords are atoms, which are ASCII."""
    return (
        sa.exists()
        .where(
            same_message(keywords, rows),
            sa.or_(keywords.c.keyword == keyword, sa.func.lower(keywords.c.keyword) == keyword),
        )
        .correlate_except(keywords)
    )


def _as_recipient(array: bool) -> sa.ColumnElement[bool]:
    return among(array, participants.c.role, _RECIPIENT_ROLES)


def _naming(address: str, array: bool) -> sa.Select[Any]:
    return sa.select(participants.c.seq).where(
        participants.c.address_key == address_key(address), _as_recipient(array)
    )


def _common_recipient(
    connection: sa.Connection, text: TextRules, address: str, accounts: Sequence[str]
) -> bool:
    """Whether SQLite should check per row that a message names `address`.

    PostgreSQL's planner weighs the two ways from its statistics. SQLite has none, so the
    reader asks first whether the address is common in the `accounts` read: a rare one is
    looked up as a list of `seq` (cheap to build, and the scan checks membership), a common
    one is checked per row as the timeline is read in order, which stops as soon as the page
    is full instead of first listing every message the address appears in. The count reads
    `ix_participants_address`; the account is checked on each row it finds there
    (`account_per_row`), or SQLite would read every participant of the account by its key."""
    if text.dialect != "sqlite":
        return False
    named = _naming(address, False).where(among(False, account_per_row(participants), accounts))
    limited = named.limit(_SHORT_LIST).subquery()
    found = connection.execute(sa.select(sa.func.count()).select_from(limited)).scalar_one()
    return bool(found >= _SHORT_LIST)


def _named_as(
    rows: NamedFromClause, address: str, per_row: bool, array: bool
) -> sa.ColumnElement[bool]:
    """Messages naming `address` as a recipient (see `_common_recipient`). The list names
    each message by its account and `seq`, as its participants are keyed."""
    if not per_row:
        named = _naming(address, array).with_only_columns(
            participants.c.account_id, participants.c.seq
        )
        return sa.tuple_(rows.c.account_id, rows.c.seq).in_(named)
    return (
        sa.exists()
        .where(
            same_message(participants, rows),
            participants.c.address_key == address_key(address),
            _as_recipient(array),
        )
        .correlate_except(participants)
    )


def _sent_range(column: sa.ColumnElement[Any], s: SummaryFilter) -> list[sa.ColumnElement[bool]]:
    clauses: list[sa.ColumnElement[bool]] = []
    if s.sent_on_or_after is not None:
        clauses.append(column >= s.sent_on_or_after)
    if s.sent_before is not None:
        clauses.append(column < s.sent_before)
    return clauses


def _wide_sent_range(connection: sa.Connection, text: TextRules, s: SummaryFilter) -> bool:
    """Whether SQLite should check the sent range per row rather than read it from its index.

    A narrow range is read from `ix_messages_folder_sent` and sorted; a wide one is checked
    per row as the timeline is read, which stops once the page is full. PostgreSQL chooses
    from its statistics. SQLite has none and takes the sent index for any range, so the
    reader first counts the range's messages in scope, up to `_SHORT_LIST`, from that index
    alone; for a range holding more, the column is written `+sent_at`, which SQLite does not
    look up in an index."""
    if text.dialect != "sqlite" or (s.sent_on_or_after is None and s.sent_before is None):
        return False
    within = _sent_range(messages.c.sent_at, s)
    ranged = sa.select(sa.literal(1)).where(messages.c.folder_id.in_(s.folder_ids), *within)
    found = connection.execute(
        sa.select(sa.func.count()).select_from(ranged.limit(_SHORT_LIST).subquery())
    ).scalar_one()
    return bool(found >= _SHORT_LIST)


@dataclass(frozen=True, slots=True)
class RowFilters:
    """A selection's optional filters, with SQLite's ways of writing them chosen."""

    selection: SummaryFilter
    text: TextRules
    recipient_per_row: bool = False
    sent_per_row: bool = False

    @classmethod
    def of(
        cls,
        connection: sa.Connection,
        selection: SummaryFilter,
        text: TextRules,
        accounts: Sequence[str],
    ) -> RowFilters:
        """The filters of `selection`, whose folders lie in `accounts`."""
        recipient = selection.recipient_address
        return cls(
            selection,
            text,
            recipient_per_row=recipient is not None
            and _common_recipient(connection, text, recipient, accounts),
            sent_per_row=_wide_sent_range(connection, text, selection),
        )

    def on(self, rows: NamedFromClause = messages) -> list[sa.ColumnElement[bool]]:
        """The filters written on `rows`, to be ANDed with the folder scope.

        `has_attachments=False` means known to have none: a message whose content is not
        stored has no attachment count, and a filter should not claim what the store does
        not know. An empty subject fragment filters nothing. A message whose sent time is
        unknown (no usable Date header) is NULL there, which no comparison passes: it never
        meets a sent bound.

        The sender is the first From mailbox, the one a summary shows, kept on the message
        row so that a sender's page is read in timeline order from its own index. The flag
        filters are written with literal values so that both databases can use the partial
        indexes kept for unread and flagged mail, which a bound parameter would hide from
        the planner."""
        s, c = self.selection, rows.c
        clauses: list[sa.ColumnElement[bool]] = []
        if s.sender_address is not None:
            clauses.append(c.sender_key == address_key(s.sender_address))
        if s.recipient_address is not None:
            array = self.text.dialect == "postgresql"
            clauses.append(_named_as(rows, s.recipient_address, self.recipient_per_row, array))
        if s.subject_fragment:
            clauses.append(self.text.contains(c.subject, text_value(s.subject_fragment)))
        if s.received_on_or_after is not None:
            clauses.append(c.received_at >= s.received_on_or_after)
        if s.received_before is not None:
            clauses.append(c.received_at < s.received_before)
        if self.sent_per_row:
            unindexed = sa.literal_column(f"+{rows.name}.sent_at", c.sent_at.type)
            clauses.extend(_sent_range(unindexed, s))
        else:
            clauses.extend(_sent_range(c.sent_at, s))
        if s.seen is not None:
            clauses.append(c.seen == (sa.true() if s.seen else sa.false()))
        if s.flagged is not None:
            clauses.append(c.flagged == (sa.true() if s.flagged else sa.false()))
        if s.keyword is not None:
            clauses.append(_carries_keyword(rows, text_value(s.keyword).lower()))
        if s.has_attachments is True:
            clauses.append(c.attachment_count > 0)
        elif s.has_attachments is False:
            clauses.append(c.attachment_count == 0)
        words = searchable(s.indexed_words)
        if words:
            clauses.append(index_matching(self.text.dialect, words, rows))
        return clauses
