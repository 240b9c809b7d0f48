"""What the sent-time filters cost, and the plans the databases choose for them.

Builds a store of `--messages` messages (two folders, received over two years, each sent up
to two days before it arrived, 3 % without a Date header, 1 % with a sender's clock years
off), through the store's own writer, at `--url` (default: a new SQLite file). Then times
each listing and search below (median of `--rounds`) and prints the plan of its slowest
page statement (by median): EXPLAIN QUERY PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL.

    uv run python bench/sent_filter_plans.py [--url postgresql+psycopg://...] [--no-index]

`--no-index` drops the sent-time index (`ix_messages_folder_sent`) first, to compare.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.app.sync.types import NewMessage
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import ContentState, RemoteFlags
from mailfathom.domain.message import HeaderRole, NormalizedMessage, Participant

START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=730)
WORDS = "apple pear plum quince medlar sloe damson rowan elder hazel".split()


def _message(rng: random.Random, n: int, received: datetime) -> NormalizedMessage:
    roll = rng.random()
    if roll < 0.03:
        sent: datetime | None = None
    elif roll < 0.04:
        sent = received - timedelta(days=rng.choice((-3650, 3650, 9000)))
    else:
        sent = received - timedelta(seconds=rng.randint(0, 2 * 86400))
    words = " ".join(rng.choice(WORDS) for _ in range(40))
    return NormalizedMessage(
        subject=f"note {n}",
        sent_at=sent,
        message_id=f"<{uuid.uuid4().hex}@example.org>",
        in_reply_to=(),
        references=(),
        participants=(Participant(HeaderRole.FROM, f"s{n % 50}@example.org", None),),
        plain_text=f"common {words} {'rare' if n % 97 == 0 else ''}",
        html=None,
        parts=(),
        markers=frozenset(),
        defects=(),
        headers_only=False,
    )


def build(engine: sa.Engine, count: int) -> tuple[int, ...]:
    store = SqlSyncStore(engine)
    store.ensure_account(
        AccountConfig(account_id="b", display_name="b", kind=AccountKind.LOCAL, folders=())
    )
    folder_ids = []
    rng = random.Random(7)
    for f, name in enumerate(("INBOX", "Archive")):
        folder = store.ensure_folder("b", FolderMapping(name, name, None, visible_to_tools=True))
        folder_ids.append(folder.folder_id)
        share = count // 2
        items = []
        for i in range(share):
            received = START + SPAN * (i / share) + timedelta(minutes=f)
            items.append(
                NewMessage(
                    uid=i + 1,
                    size_octets=2000,
                    flags=RemoteFlags(),
                    modseq=i + 1,
                    received_at=received,
                    normalized=_message(rng, i + f * share, received),
                    content_state=ContentState.STORED,
                    content_key=f"{folder.folder_id:08x}{i + 1:056x}",
                )
            )
        for first in range(0, share, 500):
            store.add_messages(folder, 1, items[first : first + 500], START)
    return tuple(folder_ids)


class Statements:
    """Every statement run, with its parameters and time inside the driver."""

    def __init__(self, engine: sa.Engine) -> None:
        self.seen: list[tuple[float, str, Any]] = []
        self._started: list[float] = []
        sa.event.listen(engine, "before_cursor_execute", self._before)
        sa.event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, *args: Any) -> None:
        self._started.append(time.perf_counter())

    def _after(self, conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        self.seen.append((time.perf_counter() - self._started.pop(), statement, parameters))


def _pages(statement: str) -> bool:
    """A statement that reads a page of the timeline or a window of matches (not the count
    before it, nor the loading of the rows found)."""
    return "ORDER BY" in statement and "LIMIT" in statement


def _plan(engine: sa.Engine, statement: str, parameters: Any) -> list[str]:
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN ANALYZE "
    with engine.connect() as c:
        raw = c.connection.driver_connection
        assert raw is not None
        cursor = raw.cursor()
        cursor.execute(prefix + statement, parameters)
        return [" | ".join(str(v) for v in row) for row in cursor.fetchall()]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-index", action="store_true")
    args = parser.parse_args()
    url = args.url or sqlite_url(Path(tempfile.mkdtemp()) / "store.sqlite3")
    engine = create_store_engine(url)
    migrate.upgrade(engine)
    started = time.perf_counter()
    scope = build(engine, args.messages)
    took = time.perf_counter() - started
    print(f"{engine.dialect.name}: {args.messages} messages in {took:.0f} s")
    if args.no_index:
        with engine.begin() as c:
            c.execute(sa.text("DROP INDEX ix_messages_folder_sent"))
    if engine.dialect.name == "postgresql":
        with engine.begin() as c:
            c.execute(sa.text("ANALYZE"))
    reader = SqlMailboxReader(engine)
    recorder = Statements(engine)

    def day(d: int) -> datetime:
        return START + timedelta(days=d)

    cases: dict[str, Callable[[], object]] = {}

    def listing(name: str, **bounds: Any) -> None:
        chosen = SummaryFilter(folder_ids=scope, **bounds)
        cases[name] = lambda: reader.summaries(chosen, newest_first=True, after=None, limit=26)

    def search(name: str, word: str, **bounds: Any) -> None:
        chosen = SummaryFilter(folder_ids=scope, **bounds)
        cases[name] = lambda: reader.search(chosen, [word], 20)

    listing("list, no filter")
    listing("list, sent in the newest week", sent_on_or_after=day(723))
    listing("list, sent one week a year back", sent_on_or_after=day(365), sent_before=day(372))
    listing("list, sent in the oldest week", sent_on_or_after=day(0), sent_before=day(7))
    listing("list, sent before any receipt", sent_before=day(0))
    listing("list, sent after 2020 (nearly all)", sent_on_or_after=datetime(2020, 1, 1, tzinfo=UTC))
    listing("list, received a year back", received_on_or_after=day(365), received_before=day(372))
    search("search rare, sent a year back", "rare", sent_on_or_after=day(365), sent_before=day(465))
    search(
        "search common, sent a year back", "quince", sent_on_or_after=day(365), sent_before=day(372)
    )
    for name, run in cases.items():
        for _ in range(3):
            run()
        times = []
        rounds = []
        for _ in range(args.rounds):
            recorder.seen.clear()
            began = time.perf_counter()
            found = run()
            times.append(time.perf_counter() - began)
            rounds.append(list(recorder.seen))
        assert isinstance(found, list)
        # The statements of a call come in the same order each round.
        medians = [statistics.median(r[i][0] for r in rounds) for i in range(len(rounds[0]))]
        paged = [i for i, (_, text, _) in enumerate(rounds[0]) if _pages(text)]
        slowest = max(paged, key=medians.__getitem__)
        _, statement, parameters = rounds[-1][slowest]
        print(f"\n## {name}: {statistics.median(times) * 1000:.2f} ms median, {len(found)} rows")
        print(f"slowest page statement {medians[slowest] * 1000:.2f} ms median; plan:")
        for line in _plan(engine, statement, parameters):
            print("   ", line)
    engine.dispose()


if __name__ == "__main__":
    main()
