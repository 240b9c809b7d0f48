"""The sender verdict and the authorship reading are stored with their message, in the same
commit, and leave with it; on SQLite and PostgreSQL alike."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.schema import message_trust, messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.trust_rows import load_trust
from mailfathom.app.sync.types import FolderRecord
from mailfathom.domain.authorship import NOT_ASSESSED
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import NOT_YET_VERIFIED

from .builders import new_message, normalized
from .trust_values import AUTHENTICATED, FAILED_LOCALLY, LIKELY, UNLIKELY

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 1000


def _folder(store: SqlSyncStore) -> FolderRecord:
    store.ensure_account(
        AccountConfig(account_id="acct", display_name="acct", kind=AccountKind.LOCAL, folders=())
    )
    return store.ensure_folder("acct", FolderMapping("INBOX", "INBOX", FolderRole.INBOX))


def _seqs(engine: sa.Engine) -> dict[int, int]:
    with engine.connect() as c:
        return {uid: seq for seq, uid in c.execute(sa.select(messages.c.seq, messages.c.uid))}


def _stored(engine: sa.Engine) -> dict[int, tuple[object, object]]:
    by_uid = {seq: uid for uid, seq in _seqs(engine).items()}
    with engine.connect() as c:
        found = load_trust(c, "acct", [list(by_uid)])
    return {by_uid[seq]: value for seq, value in found.items()}


def _trust_rows(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(message_trust)).scalar_one())


def test_the_verdict_and_the_reading_come_back_as_they_were_stored(
    store: SqlSyncStore,
) -> None:
    folder = _folder(store)
    items = [
        dataclasses.replace(
            new_message(1, normalized("one", message_id="1@x")),
            verdict=AUTHENTICATED,
            authorship=LIKELY,
        ),
        dataclasses.replace(
            new_message(
                2,
                normalized("two", message_id="2@x", headers_only=True),
                state=ContentState.EXCEEDED_SIZE_LIMIT,
            ),
            verdict=FAILED_LOCALLY,
            authorship=UNLIKELY,
        ),
        # Only one port answered: the other half reads as never established.
        dataclasses.replace(
            new_message(3, normalized("three", message_id="3@x")), verdict=None, authorship=LIKELY
        ),
        dataclasses.replace(
            new_message(4, normalized("four", message_id="4@x")), verdict=AUTHENTICATED
        ),
        # No port answered: no row at all.
        new_message(5, normalized("five", message_id="5@x")),
    ]
    assert store.add_messages(folder, VALIDITY, items, NOW) == 5
    assert _stored(store.engine) == {
        1: (AUTHENTICATED, LIKELY),
        2: (FAILED_LOCALLY, UNLIKELY),
        3: (NOT_YET_VERIFIED, LIKELY),
        4: (AUTHENTICATED, NOT_ASSESSED),
    }
    # A repeated batch writes nothing twice.
    assert store.add_messages(folder, VALIDITY, items, NOW) == 0
    assert _trust_rows(store.engine) == 4


def test_the_rows_leave_with_their_messages(store: SqlSyncStore) -> None:
    folder = _folder(store)
    items = [
        dataclasses.replace(
            new_message(uid, normalized(f"S{uid}", message_id=f"{uid}@x")),
            verdict=AUTHENTICATED,
            authorship=LIKELY,
        )
        for uid in (1, 2)
    ]
    store.add_messages(folder, VALIDITY, items, NOW)
    store.remove_uids(folder.folder_id, VALIDITY, [1])
    assert set(_stored(store.engine)) == {2}
    assert _trust_rows(store.engine) == 1


def test_going_below_the_trust_revision_and_back_keeps_every_message(
    store: SqlSyncStore,
) -> None:
    folder = _folder(store)
    item = dataclasses.replace(
        new_message(1, normalized("one", message_id="1@x")),
        verdict=AUTHENTICATED,
        authorship=LIKELY,
    )
    store.add_messages(folder, VALIDITY, [item], NOW)
    migrate.downgrade(store.engine, "0017_contact_statistics")
    tables = sa.inspect(store.engine).get_table_names()
    assert "message_trust" not in tables
    assert "trust_positions" not in tables
    assert list(_seqs(store.engine)) == [1]
    migrate.upgrade(store.engine)
    assert migrate.current_revision(store.engine) == migrate.head_revision()
    # What was verified before is gone with the table: the message reads as not yet verified.
    assert _stored(store.engine) == {}
    assert list(_seqs(store.engine)) == [1]
