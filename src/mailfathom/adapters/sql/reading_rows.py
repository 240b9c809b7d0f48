"""Pieces of the read side: stored rows as read-side values, read in batches by `seq`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql.selectable import NamedFromClause

from mailfathom.adapters.sql.fixed_reads import rows as fixed_rows
from mailfathom.adapters.sql.fixed_reads import scalars as fixed_scalars
from mailfathom.adapters.sql.schema import keywords, message_trust, messages, participants, parts
from mailfathom.adapters.sql.trust_rows import TRUST_COLUMNS, reading_of, verdict_of
from mailfathom.app.shared.stored_mail import (
    ParticipantRow,
    PartRow,
    StoredFlags,
    SummaryRow,
)
from mailfathom.domain.authorship import NOT_ASSESSED, AuthorshipReading
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.sender_verdict import NOT_YET_VERIFIED, SenderVerdict

CHUNK = 500

T = TypeVar("T")


def chunks(values: Sequence[T]) -> Iterable[Sequence[T]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def named_folder(column: sa.ColumnElement[int]) -> sa.ColumnElement[int]:
    """A folder column as a statement naming its rows by `seq` tests it: through no index.
    Without statistics SQLite reads such a statement from an index on the folder once more
    than a few dozen rows are named (every row of the folders, 200 ms at 100,000 messages)
    instead of from the named rows themselves."""
    return column + 0


def account_per_row(rows: NamedFromClause) -> sa.ColumnElement[str]:
    """The account column of `rows` as SQLite checks it on each row it reads, never through
    an index: `+table.account_id`, SQLite's way of ruling a term out of index choice (the
    unary plus leaves text as it is). A statement read from an index it was written for (a
    folder's timeline) names its accounts this way, so that SQLite, which keeps no
    statistics, cannot take `ix_messages_account_received` instead. SQLite only."""
    return sa.literal_column(f"+{rows.name}.account_id", rows.c.account_id.type)


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

# The statements of the read side are built once; each call binds its values, the lists of
# `seq` and identifiers cut to CHUNK values per statement. A list is one array parameter on
# PostgreSQL (`= ANY`), so a statement's text is the same whatever the list's length: it is
# neither rendered again for each length nor parsed again by the server, which prepares it
# once it has come often enough. SQLite has no arrays: there a list is expanded into one
# parameter per value (`IN (...)`). A function's `array` says which form to write: the
# PostgreSQL one when true (`arrays`).


def arrays(connection: sa.Connection) -> bool:
    """Whether a list is bound as one array on `connection`'s database."""
    return connection.dialect.name == "postgresql"


def listed(array: bool, column: sa.ColumnElement[Any], name: str) -> sa.ColumnElement[bool]:
    """`column` is one of the list bound to `name` at execution."""
    if array:
        return column == sa.any_(sa.bindparam(name, type_=postgresql.ARRAY(column.type)))
    return column.in_(sa.bindparam(name, expanding=True))


def among(
    array: bool, column: sa.ColumnElement[Any], values: Iterable[Any]
) -> sa.ColumnElement[bool]:
    """`column` is one of `values`, bound with the condition: for a statement made per call,
    or a list of constants."""
    if array:
        bound = sa.bindparam(None, list(values), type_=postgresql.ARRAY(column.type))
        return column == sa.any_(bound)
    return column.in_(list(values))


# A message's sender verdict and authorship reading come with its row: at most one
# `message_trust` row per message, so the outer join never multiplies a row. The children of
# a message are keyed by `(account_id, seq)` (revision 0028): every statement reading them
# names the accounts too, or no index could serve it and it would read the whole table.
_WITH_TRUST = messages.outerjoin(
    message_trust,
    sa.and_(
        message_trust.c.account_id == messages.c.account_id,
        message_trust.c.seq == messages.c.seq,
    ),
)
_TRUST = tuple(message_trust.c[name] for name in TRUST_COLUMNS if name != "seq")


def _people_and_keywords(
    people: sa.Select[Any], words_of: sa.ColumnElement[bool]
) -> sa.CompoundSelect[Any]:
    """`people`'s rows and the keywords of the same messages in one statement (one round
    trip), told apart by `kind`: 0 a participant, in header order, 1 a keyword."""
    persons = people.with_only_columns(
        participants.c.seq,
        sa.literal_column("0").label("kind"),
        participants.c.position,
        participants.c.role,
        participants.c.address,
        participants.c.display_name,
    ).order_by(None)
    words = sa.select(
        keywords.c.seq,
        sa.literal_column("1"),
        sa.literal_column("0"),
        sa.null(),
        keywords.c.keyword,
        sa.null(),
    ).where(words_of)
    both = sa.union_all(persons, words)
    return both.order_by(*(both.selected_columns[n] for n in ("seq", "kind", "position")))


@dataclass(frozen=True, slots=True)
class _Statements:
    """The read side's statements by `seq` and identifier, in one database's form."""

    rows_by_seq: dict[bool, sa.Select[Any]]
    rows_by_id: sa.Select[Any]
    people_and_keywords: dict[bool, sa.CompoundSelect[Any]]
    senders: sa.Select[Any]
    parts: sa.Select[Any]
    inside: sa.Select[Any]

    @classmethod
    def made(cls, array: bool) -> _Statements:
        people = sa.select(
            participants.c.seq,
            participants.c.role,
            participants.c.address,
            participants.c.display_name,
        ).order_by(participants.c.seq, participants.c.position)
        all_people = people.where(
            listed(array, participants.c.account_id, "accounts"),
            listed(array, participants.c.seq, "seqs"),
        )
        listed_people = all_people.where(among(array, participants.c.role, ("from", "to")))
        words_of = sa.and_(
            listed(array, keywords.c.account_id, "accounts"),
            listed(array, keywords.c.seq, "seqs"),
        )
        return cls(
            rows_by_seq={
                details: sa.select(*SUMMARY_COLUMNS, *(DETAIL_COLUMNS if details else ()), *_TRUST)
                .select_from(_WITH_TRUST)
                .where(
                    listed(array, messages.c.account_id, "accounts"),
                    listed(array, messages.c.seq, "seqs"),
                )
                for details in (False, True)
            },
            rows_by_id=sa.select(*SUMMARY_COLUMNS, *DETAIL_COLUMNS, *_TRUST)
            .select_from(_WITH_TRUST)
            .where(
                listed(array, messages.c.account_id, "accounts"),
                listed(array, messages.c.stored_email_id, "ids"),
                listed(array, messages.c.folder_id, "folders"),
            ),
            people_and_keywords={
                details: _people_and_keywords(all_people if details else listed_people, words_of)
                for details in (False, True)
            },
            senders=all_people.where(participants.c.role == "from"),
            parts=sa.select(
                parts.c.seq,
                parts.c.kind,
                parts.c.file_name,
                parts.c.name_was_normalized,
                parts.c.media_type,
                parts.c.size_octets,
                parts.c.part_path,
            )
            .where(
                listed(array, parts.c.account_id, "accounts"),
                listed(array, parts.c.seq, "seqs"),
            )
            .order_by(parts.c.seq, parts.c.position),
            inside=sa.select(messages.c.seq).where(
                listed(array, messages.c.account_id, "accounts"),
                listed(array, messages.c.seq, "seqs"),
                listed(array, named_folder(messages.c.folder_id), "folders"),
            ),
        )


_STATEMENTS = {array: _Statements.made(array) for array in (False, True)}


def _statements(connection: sa.Connection) -> _Statements:
    return _STATEMENTS[arrays(connection)]


def _by_seq(
    connection: sa.Connection,
    statement: Callable[[_Statements], sa.Executable],
    seqs: Sequence[int],
    accounts: Iterable[str] | None = None,
) -> Iterable[Any]:
    """The rows of `statement` for `seqs`, whose messages lie in `accounts` (which a
    statement reading a message's children needs)."""
    chosen = statement(_statements(connection))
    bound: dict[str, Any] = {} if accounts is None else {"accounts": sorted(set(accounts))}
    for chunk in chunks(seqs):
        yield from fixed_rows(connection, chosen, {**bound, "seqs": list(chunk)})


def inside(
    connection: sa.Connection, seqs: Sequence[int], folders: Iterable[int], accounts: Iterable[str]
) -> list[int]:
    """Those of `seqs` that lie in `folders` (of `accounts`), each once."""
    bound = {"accounts": sorted(set(accounts)), "folders": sorted(set(folders))}
    statement = _statements(connection).inside
    found: list[int] = []
    for chunk in chunks(list(dict.fromkeys(seqs))):
        found.extend(
            int(s) for s in fixed_scalars(connection, statement, {**bound, "seqs": list(chunk)})
        )
    return found


def load_senders(
    connection: sa.Connection, seqs: Sequence[int], accounts: Iterable[str]
) -> dict[int, str]:
    """The first From address of each of `seqs` (messages of `accounts`) that has one."""
    found: dict[int, str] = {}
    for seq, _role, address, _name in _by_seq(connection, lambda s: s.senders, seqs, accounts):
        found.setdefault(seq, address)
    return found


def sender(people: Sequence[ParticipantRow]) -> ParticipantRow | None:
    """The first From mailbox: the one a listing shows as the sender."""
    return next((p for p in people if p.role == "from"), None)


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
    people: dict[int, list[ParticipantRow]] = {}
    found: dict[int, set[str]] = {}
    for seq, kind, _position, role, value, name in _by_seq(
        connection,
        lambda s: s.people_and_keywords[details],
        [r.seq for r in rows],
        (r.account_id for r in rows),
    ):
        if kind:
            found.setdefault(seq, set()).add(value.lower())
        else:
            people.setdefault(seq, []).append(ParticipantRow(role, value, name))
    words = {seq: tuple(sorted(kept)) for seq, kept in found.items()}
    loaded: dict[int, Loaded] = {}
    for r in rows:
        mine = people.get(r.seq, [])
        summary = summary_row(
            r, aliases[r.folder_id], mine, words.get(r.seq, ()), (verdict_of(r), reading_of(r))
        )
        loaded[r.seq] = Loaded(summary, r, tuple(mine))
    return loaded


def load_summaries(
    connection: sa.Connection,
    seqs: Sequence[int],
    aliases: dict[int, str],
    accounts: Iterable[str],
    *,
    details: bool = False,
) -> dict[int, Loaded]:
    """The messages `seqs` (all already known to lie in scope, in `accounts`: those of its
    folders), read in batches. With `details`, every participant and the threading and
    content columns come too."""
    rows = list(_by_seq(connection, lambda s: s.rows_by_seq[details], seqs, accounts))
    return _assemble(connection, rows, aliases, details)


def load_identified(
    connection: sa.Connection,
    stored_email_ids: Sequence[Any],
    aliases: dict[int, str],
    accounts: Iterable[str],
) -> dict[int, Loaded]:
    """The named emails that lie in the folders of `aliases` (of `accounts`), with their
    details."""
    bound = {"accounts": sorted(set(accounts)), "folders": sorted(aliases)}
    statement = _statements(connection).rows_by_id
    rows: list[sa.Row[Any]] = []
    for chunk in chunks(stored_email_ids):
        rows.extend(fixed_rows(connection, statement, {**bound, "ids": list(chunk)}))
    return _assemble(connection, rows, aliases, True)


def load_parts(
    connection: sa.Connection, seqs: Sequence[int], accounts: Iterable[str]
) -> dict[int, list[PartRow]]:
    """The parts of each of `seqs` (messages of `accounts`), in their order."""
    found: dict[int, list[PartRow]] = {}
    for r in _by_seq(connection, lambda s: s.parts, seqs, accounts):
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
