"""Pieces of the read side: filters as SQL, stored rows as read-side values.

Text from a request is compared as the writer stored text: without NUL characters, which
PostgreSQL refuses and the writer drops (`rows.text_value`).

Case-insensitive comparisons fold text by the same rule on both databases as far as they can:
SQLite's own `lower()` folds ASCII only, so the reader registers Python's `str.lower` on its
connections; PostgreSQL folds with the ICU root locale when the server has ICU, because its
plain `lower()` follows the database's LC_CTYPE, which under the C locale is ASCII only too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa

from mailfathom.adapters.sql.engine import SQLITE_FOLD_FUNCTION
from mailfathom.adapters.sql.index_queries import index_matching, searchable
from mailfathom.adapters.sql.rows import text_value
from mailfathom.adapters.sql.schema import keywords, messages, participants, parts
from mailfathom.adapters.sql.trust_rows import load_trust
from mailfathom.app.shared.stored_mail import (
    ParticipantRow,
    PartRow,
    StoredFlags,
    SummaryFilter,
    SummaryRow,
)
from mailfathom.domain.authorship import NOT_ASSESSED, AuthorshipReading
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.sender_verdict import NOT_YET_VERIFIED, SenderVerdict

CHUNK = 500
# address_key is cut to this length when written (see rows.py), so a lookup is cut alike.
_MAX_ADDRESS = 998
# Past this many messages naming an address (_named_as) or sent in a range (_sent_within),
# SQLite checks the condition per row as it reads the timeline.
_SHORT_LIST = 2000
ICU_ROOT_COLLATION = "und-x-icu"

T = TypeVar("T")


def chunks(values: Sequence[T]) -> Iterable[Sequence[T]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


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


def _carries_keyword(keyword: str) -> sa.ColumnElement[bool]:
    """The message carries `keyword` (given lower-cased), in whatever case it was stored.

    The writer stores keywords already folded (`RemoteFlags` folds them), so the plain
    equality is what matches in practice, and it lets PostgreSQL estimate from the column's
    statistics whether the keyword is common; `lower()` catches rows written otherwise. It
    folds ASCII only on SQLite, which is enough: IMAP keywords are atoms, which are ASCII."""
    return sa.exists().where(
        keywords.c.seq == messages.c.seq,
        sa.or_(keywords.c.keyword == keyword, sa.func.lower(keywords.c.keyword) == keyword),
    )


def address_key(address: str) -> str:
    return text_value(address).lower()[:_MAX_ADDRESS]


def _named_as(
    connection: sa.Connection, text: TextRules, address: str, roles: tuple[str, ...]
) -> sa.ColumnElement[bool]:
    """Messages naming `address` in one of `roles`.

    PostgreSQL's planner weighs the two ways from its statistics. SQLite has none, so the
    reader asks first whether the address is common: a rare one is looked up as a list of
    `seq` (cheap to build, and the scan checks membership), a common one is checked per row
    as the timeline is read in order, which stops as soon as the page is full instead of
    first listing every message the address appears in."""
    key = address_key(address)
    named = sa.select(participants.c.seq).where(
        participants.c.address_key == key, participants.c.role.in_(roles)
    )
    if text.dialect == "sqlite":
        found = connection.execute(
            sa.select(sa.func.count()).select_from(named.limit(_SHORT_LIST).subquery())
        ).scalar_one()
        if found >= _SHORT_LIST:
            return sa.exists().where(
                participants.c.seq == messages.c.seq,
                participants.c.address_key == key,
                participants.c.role.in_(roles),
            )
    return messages.c.seq.in_(named)


def _sent_range(column: sa.ColumnElement[Any], s: SummaryFilter) -> list[sa.ColumnElement[bool]]:
    clauses: list[sa.ColumnElement[bool]] = []
    if s.sent_on_or_after is not None:
        clauses.append(column >= s.sent_on_or_after)
    if s.sent_before is not None:
        clauses.append(column < s.sent_before)
    return clauses


def _sent_within(
    connection: sa.Connection, text: TextRules, s: SummaryFilter
) -> list[sa.ColumnElement[bool]]:
    """Messages of the scope sent in the selection's sent range.

    A narrow range is read from `ix_messages_folder_sent` and sorted; a wide one is checked
    per row as the timeline is read, which stops once the page is full. PostgreSQL chooses
    from its statistics. SQLite has none and takes the sent index for any range, so the
    reader first counts the range's messages in scope, up to `_SHORT_LIST`, from that index
    alone; for a range holding more, the column is written `+sent_at`, which SQLite does not
    look up in an index."""
    within = _sent_range(messages.c.sent_at, s)
    if text.dialect != "sqlite":
        return within
    ranged = sa.select(sa.literal(1)).where(messages.c.folder_id.in_(s.folder_ids), *within)
    found = connection.execute(
        sa.select(sa.func.count()).select_from(ranged.limit(_SHORT_LIST).subquery())
    ).scalar_one()
    if found < _SHORT_LIST:
        return within
    return _sent_range(sa.literal_column("+messages.sent_at", messages.c.sent_at.type), s)


def filter_clauses(
    connection: sa.Connection, selection: SummaryFilter, text: TextRules
) -> list[sa.ColumnElement[bool]]:
    """The selection's optional filters, to be ANDed with the folder scope.

    `has_attachments=False` means known to have none: a message whose content is not stored
    has no attachment count, and a filter should not claim what the store does not know. An
    empty subject fragment filters nothing. A message whose sent time is unknown (no usable
    Date header) is NULL there, which no comparison passes: it never meets a sent bound.

    The sender is the first From mailbox, the one a summary shows, kept on the message row
    so that a sender's page is read in timeline order from its own index. The flag filters
    are written with literal values so that both databases can use the partial indexes
    kept for unread and flagged mail, which a bound parameter would hide from the planner."""
    s = selection
    clauses: list[sa.ColumnElement[bool]] = []
    if s.sender_address is not None:
        clauses.append(messages.c.sender_key == address_key(s.sender_address))
    if s.recipient_address is not None:
        clauses.append(_named_as(connection, text, s.recipient_address, ("to", "cc")))
    if s.subject_fragment:
        clauses.append(text.contains(messages.c.subject, text_value(s.subject_fragment)))
    if s.received_on_or_after is not None:
        clauses.append(messages.c.received_at >= s.received_on_or_after)
    if s.received_before is not None:
        clauses.append(messages.c.received_at < s.received_before)
    if s.sent_on_or_after is not None or s.sent_before is not None:
        clauses.extend(_sent_within(connection, text, s))
    if s.seen is not None:
        clauses.append(messages.c.seen == (sa.true() if s.seen else sa.false()))
    if s.flagged is not None:
        clauses.append(messages.c.flagged == (sa.true() if s.flagged else sa.false()))
    if s.keyword is not None:
        clauses.append(_carries_keyword(text_value(s.keyword).lower()))
    if s.has_attachments is True:
        clauses.append(messages.c.attachment_count > 0)
    elif s.has_attachments is False:
        clauses.append(messages.c.attachment_count == 0)
    words = searchable(s.indexed_words)
    if words:
        clauses.append(index_matching(connection.dialect.name, words))
    return clauses


SUMMARY_COLUMNS = tuple(
    messages.c[name]
    for name in (
        "seq stored_email_id account_id folder_id message_id_header thread_id subject sent_at "
        "received_at size_octets attachment_count inline_count attachment_octets is_encrypted "
        "has_unverified_signature has_unexpanded_tnef seen flagged answered draft deleted "
        "flags_observed_at content_state"
    ).split()
)
DETAIL_COLUMNS = (messages.c.in_reply_to, messages.c.references_header, messages.c.content_key)

# The statements of the read side are built once; each call binds its values. The lists of
# `seq` and identifiers are expanding parameters, cut to CHUNK values per statement.
_SEQS: sa.BindParameter[Any] = sa.bindparam("seqs", expanding=True)
_IDS: sa.BindParameter[Any] = sa.bindparam("ids", expanding=True)
_FOLDERS: sa.BindParameter[Any] = sa.bindparam("folders", expanding=True)
_ROWS_BY_SEQ = {
    details: sa.select(*SUMMARY_COLUMNS, *(DETAIL_COLUMNS if details else ())).where(
        messages.c.seq.in_(_SEQS)
    )
    for details in (False, True)
}
_ROWS_BY_ID = sa.select(*SUMMARY_COLUMNS, *DETAIL_COLUMNS).where(
    messages.c.stored_email_id.in_(_IDS), messages.c.folder_id.in_(_FOLDERS)
)
_PEOPLE = sa.select(
    participants.c.seq, participants.c.role, participants.c.address, participants.c.display_name
).order_by(participants.c.seq, participants.c.position)
_ALL_PEOPLE = _PEOPLE.where(participants.c.seq.in_(_SEQS))
_LISTED_PEOPLE = _ALL_PEOPLE.where(participants.c.role.in_(("from", "to")))
_SENDERS = _ALL_PEOPLE.where(participants.c.role == "from")
_KEYWORDS = sa.select(keywords.c.seq, keywords.c.keyword).where(keywords.c.seq.in_(_SEQS))
_PARTS = (
    sa.select(
        parts.c.seq,
        parts.c.kind,
        parts.c.file_name,
        parts.c.name_was_normalized,
        parts.c.media_type,
        parts.c.size_octets,
        parts.c.part_path,
    )
    .where(parts.c.seq.in_(_SEQS))
    .order_by(parts.c.seq, parts.c.position)
)


def _by_seq(
    connection: sa.Connection, statement: sa.Select[Any], seqs: Sequence[int]
) -> Iterable[Any]:
    for chunk in chunks(seqs):
        yield from connection.execute(statement, {"seqs": list(chunk)})


def _people(
    connection: sa.Connection, statement: sa.Select[Any], seqs: Sequence[int]
) -> dict[int, list[ParticipantRow]]:
    found: dict[int, list[ParticipantRow]] = {}
    for seq, role, address, name in _by_seq(connection, statement, seqs):
        found.setdefault(seq, []).append(ParticipantRow(role, address, name))
    return found


def load_senders(connection: sa.Connection, seqs: Sequence[int]) -> dict[int, str]:
    """The first From address of each of `seqs` that has one."""
    found: dict[int, str] = {}
    for seq, _role, address, _name in _by_seq(connection, _SENDERS, seqs):
        found.setdefault(seq, address)
    return found


def sender(people: Sequence[ParticipantRow]) -> ParticipantRow | None:
    """The first From mailbox: the one a listing shows as the sender."""
    return next((p for p in people if p.role == "from"), None)


def load_keywords(connection: sa.Connection, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    found: dict[int, set[str]] = {}
    for seq, keyword in _by_seq(connection, _KEYWORDS, seqs):
        found.setdefault(seq, set()).add(keyword.lower())
    return {seq: tuple(sorted(words)) for seq, words in found.items()}


def summary_row(
    row: sa.Row[Any],
    alias: str,
    people: Sequence[ParticipantRow],
    words: tuple[str, ...],
    trust: tuple[SenderVerdict, AuthorshipReading] = (NOT_YET_VERIFIED, NOT_ASSESSED),
) -> SummaryRow:
    author = sender(people)
    return SummaryRow(
        seq=row.seq,
        stored_email_id=row.stored_email_id,
        account_id=row.account_id,
        folder_id=row.folder_id,
        folder_alias=alias,
        message_id=row.message_id_header,
        thread_id=row.thread_id,
        subject=row.subject,
        sender_address=author.address if author else None,
        sender_name=author.display_name if author else None,
        to_addresses=tuple(p.address for p in people if p.role == "to"),
        sent_at=row.sent_at,
        received_at=row.received_at,
        size_octets=row.size_octets,
        attachment_count=row.attachment_count,
        inline_count=row.inline_count,
        attachment_octets=row.attachment_octets,
        is_encrypted=bool(row.is_encrypted),
        has_unverified_signature=bool(row.has_unverified_signature),
        has_unexpanded_tnef=bool(row.has_unexpanded_tnef),
        flags=StoredFlags(
            seen=bool(row.seen),
            flagged=bool(row.flagged),
            answered=bool(row.answered),
            draft=bool(row.draft),
            deleted=bool(row.deleted),
            keywords=words,
            observed_at=row.flags_observed_at,
        ),
        content_state=ContentState(row.content_state),
        verdict=trust[0],
        authorship=trust[1],
    )


@dataclass(frozen=True, slots=True)
class Loaded:
    """One message read for an answer: its summary, its row (with the detail columns when
    asked for) and the participants read for it."""

    summary: SummaryRow
    row: sa.Row[Any]
    participants: tuple[ParticipantRow, ...]


def _assemble(
    connection: sa.Connection, rows: list[sa.Row[Any]], aliases: dict[int, str], details: bool
) -> dict[int, Loaded]:
    seqs = [r.seq for r in rows]
    people = _people(connection, _ALL_PEOPLE if details else _LISTED_PEOPLE, seqs)
    words = load_keywords(connection, seqs)
    trust = load_trust(connection, chunks(seqs))
    loaded: dict[int, Loaded] = {}
    for r in rows:
        mine = people.get(r.seq, [])
        summary = summary_row(
            r,
            aliases[r.folder_id],
            mine,
            words.get(r.seq, ()),
            trust.get(r.seq, (NOT_YET_VERIFIED, NOT_ASSESSED)),
        )
        loaded[r.seq] = Loaded(summary, r, tuple(mine))
    return loaded


def load_summaries(
    connection: sa.Connection,
    seqs: Sequence[int],
    aliases: dict[int, str],
    *,
    details: bool = False,
) -> dict[int, Loaded]:
    """The messages `seqs` (all already known to lie in scope), read in batches. With
    `details`, every participant and the threading and content columns come too."""
    rows = list(_by_seq(connection, _ROWS_BY_SEQ[details], seqs))
    return _assemble(connection, rows, aliases, details)


def load_identified(
    connection: sa.Connection, stored_email_ids: Sequence[Any], aliases: dict[int, str]
) -> dict[int, Loaded]:
    """The named emails that lie in the folders of `aliases`, with their details."""
    folder_ids = sorted(aliases)
    rows: list[sa.Row[Any]] = []
    for chunk in chunks(stored_email_ids):
        rows.extend(connection.execute(_ROWS_BY_ID, {"ids": list(chunk), "folders": folder_ids}))
    return _assemble(connection, rows, aliases, True)


def load_parts(connection: sa.Connection, seqs: Sequence[int]) -> dict[int, list[PartRow]]:
    found: dict[int, list[PartRow]] = {}
    for r in _by_seq(connection, _PARTS, seqs):
        found.setdefault(r.seq, []).append(
            PartRow(
                r.kind,
                r.file_name,
                bool(r.name_was_normalized),
                r.media_type,
                r.size_octets,
                r.part_path,
            )
        )
    return found
