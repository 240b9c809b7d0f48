"""The `message_trust` rows: a message's sender verdict and authorship reading as stored.

A row is written with its message (or replaced by a later verification of stored mail) and
read back as the domain values; a message with no row, or a half left NULL, reads as not yet
verified and not assessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import bulk
from mailfathom.adapters.sql.schema import message_trust, messages
from mailfathom.domain.authorship import (
    NOT_ASSESSED,
    AuthorshipReading,
    AuthorshipSignal,
    AuthorshipState,
)
from mailfathom.domain.sender_verdict import (
    NOT_YET_VERIFIED,
    AuthenticatedBy,
    AuthorAuthentication,
    DmarcResult,
    SenderVerdict,
    VerdictSource,
)

TRUST_COLUMNS = (
    "seq",
    "author_authentication",
    "verdict_source",
    "authenticated_domain",
    "displayed_author_domain",
    "authenticated_by",
    "dmarc",
    "authorship_state",
    "likelihood",
    "signals",
    "profile_revision",
)

# Where each half lies in a row; a half no port answered for is NULL from its first column.
_VERDICT = slice(1, 7)
_READING = slice(7, len(TRUST_COLUMNS))
# A domain name is at most 253 characters; a longer value names nothing and is not kept.
_MAX_DOMAIN = 253
_MAX_REVISION = 64


def _domain(value: str | None) -> str | None:
    return value if value is not None and len(value) <= _MAX_DOMAIN else None


def trust_tuple(
    seq: int, verdict: SenderVerdict | None, reading: AuthorshipReading | None
) -> tuple[Any, ...]:
    """One row in `TRUST_COLUMNS` order; a half no port answered for is left NULL."""
    if verdict is None:
        sender: tuple[Any, ...] = (None,) * 6
    else:
        sender = (
            verdict.author_authentication.value,
            verdict.verdict_source.value,
            _domain(verdict.authenticated_domain),
            _domain(verdict.displayed_author_domain),
            verdict.authenticated_by.value,
            verdict.dmarc.value,
        )
    if reading is None:
        text: tuple[Any, ...] = (None,) * 4
    else:
        text = (
            reading.state.value,
            min(1.0, max(0.0, float(reading.likelihood))),
            ",".join(s.value for s in reading.signals),
            (reading.profile_revision or "")[:_MAX_REVISION] or None,
        )
    return (seq, *sender, *text)


def insert_trust(
    connection: sa.Connection, account_id: str, rows: Sequence[tuple[Any, ...]]
) -> None:
    """Rows of `trust_tuple` of the messages of one account."""
    bulk.insert_rows(
        connection,
        "message_trust",
        ("account_id", *TRUST_COLUMNS),
        [(account_id, *row) for row in rows],
    )


def replace_trust(
    connection: sa.Connection, account_id: str, rows: Sequence[tuple[Any, ...]]
) -> None:
    """Write `rows` (of the account's messages) over whatever the same messages held (a
    later verification of stored mail); a message removed meanwhile is skipped, never
    recreated.

    A half a row leaves NULL (its port was not wired for this run) keeps what was stored: a
    verdict reached when the mail arrived may never be reached again once its signing key
    has rotated away, so a run that did not verify must not erase it."""
    if not rows:
        return
    seqs = [row[0] for row in rows]
    # Locked (PostgreSQL) so that a message found here is not removed before its row is in.
    present = set(
        connection.execute(
            sa.select(messages.c.seq)
            .where(messages.c.account_id == account_id, messages.c.seq.in_(seqs))
            .with_for_update()
        ).scalars()
    )
    theirs = (message_trust.c.account_id == account_id, message_trust.c.seq.in_(seqs))
    stored = {
        row[0]: tuple(row)
        for row in connection.execute(
            sa.select(*(message_trust.c[name] for name in TRUST_COLUMNS)).where(*theirs)
        )
    }
    connection.execute(message_trust.delete().where(*theirs))
    kept = [
        (account_id, *_kept_halves(row, stored.get(row[0]))) for row in rows if row[0] in present
    ]
    bulk.insert_rows(connection, "message_trust", ("account_id", *TRUST_COLUMNS), kept)


def _kept_halves(row: tuple[Any, ...], stored: tuple[Any, ...] | None) -> tuple[Any, ...]:
    if stored is None:
        return row
    verdict = row[_VERDICT] if row[_VERDICT.start] is not None else stored[_VERDICT]
    reading = row[_READING] if row[_READING.start] is not None else stored[_READING]
    return (row[0], *verdict, *reading)


def verdict_of(row: Any) -> SenderVerdict:
    if row is None or row.author_authentication is None:
        return NOT_YET_VERIFIED
    return SenderVerdict(
        author_authentication=AuthorAuthentication(row.author_authentication),
        verdict_source=VerdictSource(row.verdict_source),
        authenticated_domain=row.authenticated_domain,
        displayed_author_domain=row.displayed_author_domain,
        authenticated_by=AuthenticatedBy(row.authenticated_by),
        dmarc=DmarcResult(row.dmarc),
    )


def reading_of(row: Any) -> AuthorshipReading:
    if row is None or row.authorship_state is None:
        return NOT_ASSESSED
    signals = tuple(AuthorshipSignal(name) for name in (row.signals or "").split(",") if name)
    return AuthorshipReading(
        state=AuthorshipState(row.authorship_state),
        likelihood=float(row.likelihood or 0.0),
        signals=signals,
        profile_revision=row.profile_revision,
    )


_BY_SEQ = sa.select(message_trust).where(
    message_trust.c.account_id == sa.bindparam("account_id"),
    message_trust.c.seq.in_(sa.bindparam("seqs", expanding=True)),
)


def load_trust(
    connection: sa.Connection, account_id: str, chunks: Iterable[Sequence[int]]
) -> dict[int, tuple[SenderVerdict, AuthorshipReading]]:
    """The stored verdict and reading of each message of the account in `chunks` that has
    a row."""
    found: dict[int, tuple[SenderVerdict, AuthorshipReading]] = {}
    for chunk in chunks:
        for row in connection.execute(_BY_SEQ, {"account_id": account_id, "seqs": list(chunk)}):
            found[row.seq] = (verdict_of(row), reading_of(row))
    return found
