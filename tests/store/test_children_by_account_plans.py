"""A message's participants, keywords, parts and trust row are read through their keys.

Since revision 0028 these tables are keyed by `(account_id, seq, ...)`: a statement naming
their rows by `seq` alone can use no index and reads every row of the table (a millisecond
at 3,000 messages on PostgreSQL, seconds at millions). The read side names the accounts of
the rows it has in hand as well. The plans are asked of SQLite, whose choice without
statistics does not depend on how many rows a test stores; the statements are the same on
PostgreSQL but for the form of their lists.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.shared.stored_mail import SummaryFilter
from mailfathom.domain.content_state import RemoteFlags
from store.sqlite_plans import plan_steps, statements_of

from .builders import ATTACHMENT
from .reading_builders import Mail, add_folder, at, store_mail

CHILDREN = re.compile(r"\b(participants|keywords|parts|message_trust)\b")
BY_KEY = re.compile(r"^SEARCH \w+ USING (?:COVERING )?INDEX \w+ \(account_id=\? AND seq=\?")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    created = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(created)
    yield created
    created.dispose()


def _unkeyed(engine: sa.Engine, read: Any) -> list[str]:
    """Each step of a plan of `read(reader)` reading a child table other than by its key."""
    with statements_of(engine, CHILDREN) as seen:
        read(SqlMailboxReader(engine))
    assert len(seen) >= 4
    steps = [step for plan in plan_steps(engine, seen) for step in plan]
    return [s for s in steps if CHILDREN.search(s) and not BY_KEY.match(s)]


def test_a_page_an_email_and_a_conversation_read_the_children_by_their_keys(
    engine: sa.Engine,
) -> None:
    store = SqlSyncStore(engine)
    inbox = add_folder(store, "INBOX")
    other = add_folder(store, "INBOX", account_id="other")
    thread = uuid.uuid4()
    mail = [
        Mail(f"note {n}", at(n), flags=RemoteFlags(keywords=frozenset({"$label1"})))
        for n in range(3)
    ]
    store_mail(store, inbox, *mail, Mail("with a file", at(9), parts=(ATTACHMENT,)))
    store_mail(store, other, Mail("elsewhere", at(5)))
    with engine.begin() as c:
        c.execute(messages.update().values(thread_id=thread))
    scope = SummaryFilter(folder_ids=(inbox.folder_id, other.folder_id))

    def read(reader: SqlMailboxReader) -> None:
        page = reader.summaries(scope, newest_first=True, after=None, limit=10)
        assert len(page) == 5
        ids = [row.stored_email_id for row in page]
        assert len(reader.emails(ids, scope.folder_ids)) == 5
        assert len(reader.thread(thread, scope.folder_ids)) == 5

    assert _unkeyed(engine, read) == []
