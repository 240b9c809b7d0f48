"""Every statement the adapters send about a per-account table names the account.

A `before_cursor_execute` listener reads each statement the adapters issue (frames under
`src/mailfathom`; the tests' own inspection queries and the migrations are not adapters) and
fails it when it touches a table of `SCOPED_TABLES` (the partitioned tables, and the children
of the outbox and the drafts) without an account predicate:

- an INSERT lists `account_id` among its columns;
- any other statement compares some `account_id` with a value (`= ?`, `IN (...)`, or
  PostgreSQL's `= ANY (array)`), and
  names `account_id` of every scoped table (or alias) it reads, so a child joined by `seq`
  alone, which a partitioned layout could not prune, fails (also when it is the only scoped
  table of a join: a draft's copies joined to the draft).

What a statement may skip is listed in `CROSS_ACCOUNT_SCANS`, by the function that issues
it, each with the reason it has to look at every account.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from mailfathom.adapters.sql.distribution import PARTITIONED_TABLES, SCOPED_CHILDREN

SCOPED_TABLES = frozenset((*PARTITIONED_TABLES, *SCOPED_CHILDREN))

SOURCE = str(Path(__file__).resolve().parents[2] / "src" / "mailfathom") + "/"
MIGRATIONS = SOURCE + "adapters/sql/migrations/"

CROSS_ACCOUNT_SCANS: dict[str, str] = {
    # module:function -> why it looks at every account.
    "adapters.sql.sync_store:_still_named": "content is kept once per content, whichever "
    "accounts hold it: a key is free only when no account's row names it",
    "adapters.sql.partitioning:partition": "lays the tables out for every account at once, "
    "and applies only while no account holds a row",
}

# Statements not yet scoped, by issuer, each with what keeps it so: what is left of the sweep
# (docs/scaling.md). Remove an entry once its statements name the account; never add one.
NOT_YET_SCOPED: dict[str, str] = {
    "adapters.sql.reading_filters:_wide_sent_range": "SQLite's probe of a sent range counts "
    "up to 2,000 entries of ix_messages_folder_sent alone; checking the account would read "
    "each row from the table too (85 to 205 us at 2,000 rows)",
}

_NOT_ALIAS = frozenset(
    {
        "where",
        "on",
        "join",
        "left",
        "right",
        "inner",
        "outer",
        "full",
        "cross",
        "group",
        "order",
        "limit",
        "set",
        "values",
        "returning",
        "union",
        "using",
        "natural",
        "select",
        "default",
        "offset",
        "for",
        "having",
        "window",
        "except",
        "intersect",
    }
)
# A word after a table is its alias unless it is a keyword, which is left for the next match
# (`FROM messages JOIN parts` names both tables).
_TABLE = re.compile(
    r"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?P<table>\w+)"
    rf"(?:\s+(?:AS\s+)?(?!(?:{'|'.join(sorted(_NOT_ALIAS))})\b)(?P<alias>\w+))?",
    re.IGNORECASE,
)
_BOUND = re.compile(
    r"\baccount_id\s*(?:=\s*(?:\?|%s|%\(\w+\)s|:\w+|'[^']*'|ANY\s*\()|IN\s*\()",
    re.IGNORECASE,
)
_JOIN = re.compile(r"\bJOIN\b", re.IGNORECASE)
_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE)


def unscoped(statement: str) -> str | None:
    """Why `statement` is not scoped to one account, or None when it is."""
    named = [
        (m["table"], (m["alias"] or m["table"]))
        for m in _TABLE.finditer(statement)
        if m["table"] in SCOPED_TABLES
    ]
    if not named:
        return None
    insert = _INSERT.match(statement)
    if insert and insert[1] in SCOPED_TABLES:
        columns = {c.strip().strip('"') for c in insert[2].split(",")}
        if "account_id" not in columns:
            return f"INSERT INTO {insert[1]} without account_id"
        named = [n for n in named if n[0] != insert[1]]
        if not named:
            return None
    if not _BOUND.search(statement):
        return "no account_id compared with a value"
    joined = _JOIN.search(statement) is not None
    for table, alias in named:
        qualified = re.search(rf"\b{re.escape(alias)}\.account_id\b", statement)
        if not qualified and (joined or len({t for t, _ in named}) > 1):
            return f"{table} read without its account_id"
        if not qualified and not re.search(r"\baccount_id\b", statement):
            return f"{table} read without its account_id"
    return None


def _issuer(frame: FrameType | None) -> tuple[str, str] | None:
    """(module path, function) of the innermost frame under src/mailfathom, or None when a
    test or a migration issued the statement."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(SOURCE):
            if filename.startswith(MIGRATIONS):
                return None
            module = filename[len(SOURCE) :].removesuffix(".py").replace("/", ".")
            return module, frame.f_code.co_name
        if "/tests/" in filename and "/site-packages/" not in filename:
            return None
        frame = frame.f_back
    return None


@dataclass
class ScopeWatch:
    """The statements seen that were not scoped, by their issuer."""

    found: list[str] = field(default_factory=list)

    def listen(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        issuer = _issuer(sys._getframe(1))
        if issuer is None:
            return
        name = f"{issuer[0]}:{issuer[1]}"
        if name in CROSS_ACCOUNT_SCANS:
            return
        if name in NOT_YET_SCOPED:
            return
        reason = unscoped(statement)
        if reason is not None:
            self.found.append(f"{name}: {reason}: {' '.join(statement.split())[:300]}")


@contextmanager
def account_scope_checked() -> Iterator[ScopeWatch]:
    """Watches every engine's statements while the block runs."""
    watch = ScopeWatch()
    event.listen(sa.Engine, "before_cursor_execute", watch.listen)
    try:
        yield watch
    finally:
        event.remove(sa.Engine, "before_cursor_execute", watch.listen)
