"""Revision 0028 copies each message child's `account_id` from its message: with two
accounts whose messages' `seq`s interleave, every child row gets its own message's account
and none is lost. SQLite rebuilds the tables, PostgreSQL updates them in place; both run."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.domain.content_state import RemoteFlags

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
BEFORE = "0027_console_first_passkey"
# The children these messages have rows in (`message_search`: PostgreSQL's search rows).
CHILDREN = ("participants", "message_identifiers", "keywords", "message_search")


def _owners(engine: sa.Engine, table: str) -> list[tuple[str, str]]:
    """(the row's account, its message's account) for each row of `table`."""
    with engine.connect() as c:
        rows = c.execute(
            sa.text(
                f"SELECT c.account_id, m.account_id FROM {table} c "
                "JOIN messages m ON m.seq = c.seq ORDER BY c.seq"
            )
        )
        return [(str(own), str(message)) for own, message in rows]


def test_0028_gives_each_child_row_its_own_messages_account(engine: sa.Engine) -> None:
    store = SqlSyncStore(engine)
    folders = {account: inbox_and_junk(store, account)[0] for account in ("alpha", "beta")}
    for uid in range(1, 5):
        for account, folder in folders.items():
            message = normalized(
                f"{account} {uid}", message_id=f"{account}-{uid}@x", body=f"body {uid}"
            )
            flags = RemoteFlags(seen=True, keywords=frozenset({f"$tag{uid}"}))
            store.add_messages(folder, 1, [new_message(uid, message, flags=flags)], NOW)
    present = set(sa.inspect(engine).get_table_names())
    children = [t for t in CHILDREN if t in present]
    assert len(children) >= 3
    before = {table: _owners(engine, table) for table in children}
    assert all(len({own for own, _ in rows}) == 2 for rows in before.values())

    migrate.downgrade(engine, BEFORE)
    migrate.upgrade(engine)

    for table in children:
        after = _owners(engine, table)
        assert after == before[table], table
        assert all(own == message for own, message in after), table
