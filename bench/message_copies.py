"""What listing each message once across folders costs, against listing every copy.

    uv run python bench/message_copies.py [--messages N] [--rounds R] [--postgres] [--no-index]

A mailbox laid out as Gmail publishes one is written through the store's own writer into a
fresh store (the embedded SQLite file, and with --postgres a private PostgreSQL server as
well): N messages, every one in All Mail, 40 % also in INBOX, 20 % in a label (Work), 10 % in
another (Receipts) and 10 % in Sent, each copy with the message's content key, 30 % unseen.
Then each read below runs over all five folders, the reads interleaved round by round, two
ways on the same store in the same run:

  after   the reader as it is: each message once (`adapters/sql/message_copies.py`), from
          its first copy passing the filters (and holding the searched word), with the
          other folders holding it named
  before  the same reader with that condition and that lookup switched off, which lists
          every copy: what a listing across folders read before

Printed per store: the median of each way, and their ratio. --no-index drops the index the
condition reads (`ix_messages_content_copies`) first, to show what it is for. Nothing here
passes or fails.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import sqlalchemy as sa

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO / "tests"))

from machine import log, stores  # noqa: E402

from mailfathom.adapters.sql import message_copies, migrate  # noqa: E402
from mailfathom.adapters.sql.engine import create_store_engine  # noqa: E402
from mailfathom.adapters.sql.reading import SqlMailboxReader  # noqa: E402
from mailfathom.adapters.sql.sync_store import SqlSyncStore  # noqa: E402
from mailfathom.app.shared.stored_mail import SummaryFilter, TimelinePosition  # noqa: E402
from mailfathom.app.sync.types import NewMessage  # noqa: E402
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping  # noqa: E402
from mailfathom.domain.content_state import ContentState, RemoteFlags  # noqa: E402
from mailfathom.domain.folders import FolderRole  # noqa: E402
from mailfathom.domain.message import HeaderRole, NormalizedMessage, Participant  # noqa: E402

START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN = timedelta(days=730)
WORDS = "apple pear plum quince medlar sloe damson rowan elder hazel".split()
# Folder, role, and the share of messages it holds (All Mail holds every one).
LAYOUT = (
    ("INBOX", FolderRole.INBOX, 0.4),
    ("Work", None, 0.2),
    ("Receipts", None, 0.1),
    ("[Gmail]/Sent Mail", FolderRole.SENT, 0.1),
    ("[Gmail]/All Mail", FolderRole.ALL, 1.0),
)
BATCH = 500


def _message(rng: random.Random, n: int, received: datetime) -> NormalizedMessage:
    words = " ".join(rng.choice(WORDS) for _ in range(40))
    return NormalizedMessage(
        subject=f"note {n}",
        sent_at=received - timedelta(minutes=5),
        message_id=f"<{n}@bench.example>",
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
    """Write the mailbox; the folder ids in mapping order."""
    store = SqlSyncStore(engine)
    store.ensure_account(
        AccountConfig(account_id="g", display_name="g", kind=AccountKind.IMAP, folders=())
    )
    rng = random.Random(11)
    received = [START + SPAN * (n / count) for n in range(count)]
    messages = [_message(rng, n, received[n]) for n in range(count)]
    unseen = {n for n in range(count) if rng.random() < 0.3}
    folder_ids: list[int] = []
    for name, role, share in LAYOUT:
        folder = store.ensure_folder("g", FolderMapping(name, name, role))
        folder_ids.append(folder.folder_id)
        held = [n for n in range(count) if share >= 1.0 or rng.random() < share]
        items = [
            NewMessage(
                uid=uid,
                size_octets=2000,
                flags=RemoteFlags(seen=n not in unseen),
                modseq=uid,
                received_at=received[n],
                normalized=messages[n],
                content_state=ContentState.STORED,
                content_key=hashlib.sha256(f"message {n}".encode()).hexdigest(),
            )
            for uid, n in enumerate(held, start=1)
        ]
        for first in range(0, len(items), BATCH):
            store.add_messages(folder, 1, items[first : first + BATCH], START)
        log(f"  {name}: {len(items)} copies")
    return tuple(folder_ids)


@contextmanager
def _every_copy() -> Iterator[None]:
    """The reader with the condition and the lookup of other folders switched off."""
    kept = message_copies.merges
    message_copies.merges = lambda ranks: False
    try:
        yield
    finally:
        message_copies.merges = kept


def _cases(reader: SqlMailboxReader, scope: tuple[int, ...]) -> dict[str, Callable[[], int]]:
    every = SummaryFilter(folder_ids=scope)
    middle = TimelinePosition(START + SPAN / 2, 10**12)

    def listing(selection: SummaryFilter, **options: object) -> Callable[[], int]:
        newest_first = bool(options.get("newest_first", True))
        after = options.get("after")
        assert after is None or isinstance(after, TimelinePosition)
        return lambda: len(
            reader.summaries(selection, newest_first=newest_first, after=after, limit=26)
        )

    def search(word: str, selection: SummaryFilter = every) -> Callable[[], int]:
        return lambda: len(reader.search(selection, [word], 20))

    return {
        "list, newest page": listing(every),
        "list, oldest page": listing(every, newest_first=False),
        "list, a page halfway back": listing(every, after=middle),
        "list, unseen only": listing(SummaryFilter(folder_ids=scope, seen=False)),
        "list, one sender": listing(
            SummaryFilter(folder_ids=scope, sender_address="s7@example.org")
        ),
        "search, a rare word": search("rare"),
        "search, a word most mail carries": search("common"),
        "search, a rare word, unseen only": search(
            "rare", SummaryFilter(folder_ids=scope, seen=False)
        ),
    }


def _measure(label: str, url: str, count: int, rounds: int, no_index: bool) -> None:
    engine = create_store_engine(url)
    try:
        migrate.upgrade(engine)
        log(f"{label}: writing {count} messages")
        scope = build(engine, count)
        if no_index:
            with engine.begin() as c:
                c.execute(sa.text("DROP INDEX ix_messages_content_copies"))
        if engine.dialect.name == "postgresql":
            with engine.begin() as c:
                c.execute(sa.text("ANALYZE"))
        reader = SqlMailboxReader(engine)
        cases = _cases(reader, scope)
        print(f"\n{label}, {count} messages in 5 folders (page 25, search window 20)"
              f"{', without the index' if no_index else ''}:")  # fmt: skip
        print(f"  {'read':36} {'before ms':>10} {'after ms':>10} {'after/before':>13}  rows")
        for name, run in cases.items():
            before: list[float] = []
            after: list[float] = []
            for turn in range(rounds + 3):
                for way in ("before", "after") if turn % 2 else ("after", "before"):
                    started = time.perf_counter()
                    if way == "before":
                        with _every_copy():
                            rows_before = run()
                    else:
                        rows_after = run()
                    took = time.perf_counter() - started
                    if turn >= 3:
                        (before if way == "before" else after).append(took)
            b, a = statistics.median(before) * 1000, statistics.median(after) * 1000
            print(f"  {name:36} {b:10.2f} {a:10.2f} {a / b:13.2f}  {rows_before}/{rows_after}")
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--postgres", action="store_true", help="measure PostgreSQL as well")
    parser.add_argument("--no-index", action="store_true", help="drop the copies' index first")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="message-copies-") as scratch,
        stores(Path(scratch), args.postgres, "copies_bench") as found,
    ):
        for label, url in found:
            _measure(label, url, args.messages, args.rounds, args.no_index)


if __name__ == "__main__":
    main()
