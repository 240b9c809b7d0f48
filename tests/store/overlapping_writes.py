"""Two writes of one table made to overlap in a fixed order, for a bound that must hold when
both count it at once: the first is held inside its transaction just after its INSERT into
the table, the second runs meanwhile, and the first is let go only once the second has
finished or waits on a lock. Without a lock serializing the writers, the second on
PostgreSQL counts without the first's row and writes; with one, it waits and then counts
it. On SQLite the second waits at its BEGIN IMMEDIATE, which nothing shows, so the first is
let go at once: the second begins after it either way."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from waiting import wait_for

_WAITING = sa.text(
    "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
    " WHERE NOT l.granted AND d.datname = current_database()"
)


def _waits_on_a_lock(engine: sa.Engine) -> bool:
    if engine.dialect.name != "postgresql":
        return True
    with engine.connect() as c:
        return bool(c.execute(_WAITING).scalar_one())


def overlapped(
    engine: sa.Engine, table: sa.Table, first: Callable[[], object], second: Callable[[], object]
) -> tuple[object, object]:
    """What `first` and `second` answered (or raised), run as the module says."""
    wrote, go = threading.Event(), threading.Event()
    answers: dict[str, object] = {}
    holder: list[int] = []
    insert = f"INSERT INTO {table.name} "

    def held(_c: object, _cursor: object, statement: str, *_rest: Any) -> None:
        if holder == [threading.get_ident()] and statement.lstrip().startswith(insert):
            wrote.set()
            go.wait()

    def run(name: str, work: Callable[[], object]) -> None:
        if name == "first":
            holder.append(threading.get_ident())
        try:
            answers[name] = work()
        except Exception as error:
            answers[name] = error

    sa.event.listen(engine, "after_cursor_execute", held)
    threads = {
        name: threading.Thread(target=run, args=(name, work))
        for name, work in (("first", first), ("second", second))
    }
    try:
        threads["first"].start()
        wait_for(lambda: wrote.is_set() or not threads["first"].is_alive(), "the first write")
        threads["second"].start()
        wait_for(
            lambda: not threads["second"].is_alive() or _waits_on_a_lock(engine),
            "the second write ending or waiting",
        )
    finally:
        go.set()
        for thread in threads.values():
            if thread.ident is not None:
                thread.join()
        sa.event.remove(engine, "after_cursor_execute", held)
    return answers["first"], answers["second"]
