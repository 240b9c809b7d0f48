"""Two store calls made to meet in a fixed order, for a guard that must hold when they meet:
a race test released by a barrier may never overlap where the guard matters.

`overlapped`: the first is held inside its transaction just after its first statement that
`at` finds (an INSERT into a table whose rows are counted, an UPDATE, a SELECT ... FOR
UPDATE), the second runs meanwhile, and the first is let go only once the second has
finished or waits on a lock. Without a lock serializing them, the second on PostgreSQL
reads without the first's write and writes; with one, it waits and then reads it. On
SQLite the second waits at its BEGIN IMMEDIATE, which nothing shows, so the first is let go
at once: the second begins after it either way.

`interleaved`: the first is held between two of its transactions, once a statement that
`after` finds has run and before it begins the next, and let go once the second has
finished. A call that reads in one transaction and writes in a later one must write only if
what it read still holds: this is where the second changes it, on either store."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from waiting import wait_for

# Any lock: on a table, a row another transaction wrote (its transaction id), an advisory one.
_WAITING = sa.text(
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


def _waits_on_a_lock(engine: sa.Engine) -> bool:
    if engine.dialect.name != "postgresql":
        return True
    with engine.connect() as c:
        return bool(c.execute(_WAITING).scalar_one())


def overlapped(
    engine: sa.Engine, first: Callable[[], object], second: Callable[[], object], *, at: str
) -> tuple[object, object]:
    """What `first` and `second` answered (or raised), `first` held just after the first
    statement the regular expression `at` finds, inside its transaction."""
    return _held(engine, first, second, at, between=False)


def interleaved(
    engine: sa.Engine, first: Callable[[], object], second: Callable[[], object], *, after: str
) -> tuple[object, object]:
    """What `first` and `second` answered (or raised), `second` run whole while `first` is
    held at the beginning of its next transaction once a statement `after` finds has run."""
    return _held(engine, first, second, after, between=True)


def _held(
    engine: sa.Engine,
    first: Callable[[], object],
    second: Callable[[], object],
    pattern: str,
    *,
    between: bool,
) -> tuple[object, object]:
    found = re.compile(pattern)
    reached, holding, go = threading.Event(), threading.Event(), threading.Event()
    answers: dict[str, object] = {}
    holder: list[int] = []

    def hold() -> None:
        holding.set()
        go.wait()

    def ran(_c: object, _cursor: object, statement: str, *_rest: Any) -> None:
        if holder == [threading.get_ident()] and found.search(statement):
            reached.set()
            if not between:
                hold()

    def next_transaction() -> bool:
        return between and holder == [threading.get_ident()] and reached.is_set()

    # Held before the next transaction takes anything: on PostgreSQL when it begins (its
    # first statement opens it), on SQLite before the store's BEGIN IMMEDIATE is sent.
    def begins(c: sa.Connection) -> None:
        if next_transaction() and c.dialect.name != "sqlite":
            hold()

    def sqlite_begins(_c: object, _cursor: object, statement: str, *_rest: Any) -> None:
        if next_transaction() and statement.startswith("BEGIN"):
            hold()

    def run(name: str, work: Callable[[], object]) -> None:
        if name == "first":
            holder.append(threading.get_ident())
        try:
            answers[name] = work()
        except Exception as error:
            answers[name] = error

    sa.event.listen(engine, "after_cursor_execute", ran)
    sa.event.listen(engine, "begin", begins)
    sa.event.listen(engine, "before_cursor_execute", sqlite_begins)
    threads = {
        name: threading.Thread(target=run, args=(name, work))
        for name, work in (("first", first), ("second", second))
    }
    try:
        threads["first"].start()
        wait_for(lambda: holding.is_set() or not threads["first"].is_alive(), "the first held")
        assert holding.is_set(), "the first ended without reaching where it is held"
        threads["second"].start()
        wait_for(
            lambda: not threads["second"].is_alive() or (not between and _waits_on_a_lock(engine)),
            "the second ending or waiting",
        )
    finally:
        go.set()
        for thread in threads.values():
            if thread.ident is not None:
                thread.join()
        sa.event.remove(engine, "after_cursor_execute", ran)
        sa.event.remove(engine, "begin", begins)
        sa.event.remove(engine, "before_cursor_execute", sqlite_begins)
    return answers["first"], answers["second"]
