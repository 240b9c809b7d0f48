"""What console keys and recent tool calls rely on from the store, on SQLite and PostgreSQL:
a key found by its identifier until revoked, one key per form, an entry's active keys
bounded (also against adds at once), revocation seen by the next reader and the newest
revoked keys kept; calls read newest first, filtered and paged, and trimmed to the newest
as they are written; and the 0024 migration both ways."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.caller_keys import SqlApiKeys, SqlToolCalls
from mailfathom.adapters.sql.schema import console_api_keys
from mailfathom.app.console.access_ports import (
    DuplicateForm,
    IssuedKey,
    ToolCallRecord,
    TooManyKeys,
)

from .overlapping_writes import overlapped

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
MOST = 50
KEPT = 1000


def _key(key_id: str, caller: str = "agent", nonce: str | None = None) -> IssuedKey:
    return IssuedKey(
        key_id=key_id,
        caller=caller,
        key_sha256=key_id[0] * 64,
        form_nonce=nonce or (key_id * 3)[:32],
        created_at=T0,
    )


def _call(n: int, caller: str = "agent", outcome: str = "success") -> ToolCallRecord:
    return ToolCallRecord(
        at=T0 + timedelta(seconds=n),
        tool="list_accounts",
        caller=caller,
        outcome=outcome,
        code=None if outcome == "success" else 51017,
        duration_us=1000 + n,
    )


def test_a_key_is_found_by_its_identifier_until_it_is_revoked(engine: sa.Engine) -> None:
    keys = SqlApiKeys(engine)
    keys.add(_key("a1" * 6), MOST)
    keys.add(_key("b2" * 6, caller="other"), MOST)
    assert keys.find("a1" * 6) == _key("a1" * 6)
    assert keys.find("c3" * 6) is None
    assert [k.key_id for k in keys.active()] == ["a1" * 6, "b2" * 6]

    assert keys.revoke("a1" * 6, T0 + timedelta(minutes=1), KEPT)
    assert not keys.revoke("a1" * 6, T0 + timedelta(minutes=2), KEPT)
    assert not keys.revoke("c3" * 6, T0, KEPT)
    found = keys.find("a1" * 6)
    assert found is not None
    assert found.revoked_at == T0 + timedelta(minutes=1)
    # Another reader on another connection sees the revocation at once.
    assert SqlApiKeys(engine).find("a1" * 6) == found
    assert [k.key_id for k in keys.active()] == ["b2" * 6]


def test_a_form_makes_one_key(engine: sa.Engine) -> None:
    keys = SqlApiKeys(engine)
    keys.add(_key("a1" * 6, nonce="f" * 32), MOST)
    with pytest.raises(DuplicateForm):
        keys.add(_key("b2" * 6, nonce="f" * 32), MOST)
    assert [k.key_id for k in keys.active()] == ["a1" * 6]


def _numbered(n: int, caller: str = "agent") -> IssuedKey:
    return _key(f"{n:012x}", caller=caller, nonce=f"{n:032x}")


def test_an_entry_holds_at_most_its_bound_of_active_keys(engine: sa.Engine) -> None:
    keys = SqlApiKeys(engine)
    for n in range(3):
        keys.add(_numbered(n), 3)
    with pytest.raises(TooManyKeys):
        keys.add(_numbered(3), 3)
    assert keys.find(_numbered(3).key_id) is None
    # A form already used says so, at the bound as below it.
    with pytest.raises(DuplicateForm):
        keys.add(_key("f" * 12, nonce=_numbered(0).form_nonce), 3)
    keys.add(_numbered(4, caller="other"), 3)
    assert keys.revoke(_numbered(0).key_id, T0, KEPT)
    keys.add(_numbered(5), 3)
    assert [k.key_id for k in keys.active() if k.caller == "agent"] == [
        _numbered(n).key_id for n in (1, 2, 5)
    ]


def test_of_two_keys_added_at_once_for_the_last_place_one_is_kept(engine: sa.Engine) -> None:
    """The count is taken in the transaction that writes, with writers of keys serialized:
    a second add counting while the first has written but not committed waits for it."""
    keys = SqlApiKeys(engine)
    for n in range(4):
        keys.add(_numbered(n), 5)
    first, second = overlapped(
        engine,
        lambda: keys.add(_numbered(10), 5),
        lambda: keys.add(_numbered(11), 5),
        at=f"^INSERT INTO {console_api_keys.name} ",
    )
    assert first is None
    assert isinstance(second, TooManyKeys)
    assert len(keys.active()) == 5


def test_revoking_keeps_only_the_newest_revoked_keys(engine: sa.Engine) -> None:
    keys = SqlApiKeys(engine)
    for n in range(5):
        keys.add(_numbered(n), MOST)
    for n in (3, 0, 4, 1):
        assert keys.revoke(_numbered(n).key_id, T0 + timedelta(minutes=n), 2)
    with engine.connect() as c:
        kept = c.execute(sa.text("SELECT key_id FROM console_api_keys")).scalars().all()
    assert sorted(kept) == sorted(_numbered(n).key_id for n in (2, 3, 4))
    # A revoked key kept still keeps its form used.
    with pytest.raises(DuplicateForm):
        keys.add(_key("f" * 12, nonce=_numbered(4).form_nonce), MOST)
    assert [k.key_id for k in keys.active()] == [_numbered(2).key_id]


def test_calls_are_read_newest_first_filtered_and_paged(engine: sa.Engine) -> None:
    log = SqlToolCalls(engine)
    for n in range(5):
        log.append([_call(n, caller="a" if n % 2 else "b")], keep=100)
    log.append([_call(5, outcome="refused")], keep=100)
    newest = log.newest(3)
    assert [c.at for c in newest] == [T0 + timedelta(seconds=n) for n in (5, 4, 3)]
    assert newest[0] == ToolCallRecord(
        at=T0 + timedelta(seconds=5),
        tool="list_accounts",
        caller="agent",
        outcome="refused",
        code=51017,
        duration_us=1005,
        call_id=newest[0].call_id,
    )
    older = log.newest(10, before=newest[-1].call_id)
    assert [c.at.second for c in older] == [2, 1, 0]
    assert [c.at.second for c in log.newest(10, caller="a")] == [3, 1]
    assert [c.at.second for c in log.newest(10, outcome="refused")] == [5]
    assert log.newest(10, caller="a", outcome="refused") == []
    assert log.callers() == ["a", "agent", "b"]


def test_writing_keeps_only_the_newest_calls(engine: sa.Engine) -> None:
    log = SqlToolCalls(engine)
    for n in range(7):
        log.append([_call(n)], keep=3)
    assert [c.at.second for c in log.newest(100)] == [6, 5, 4]


def test_the_log_is_trimmed_once_per_tenth_of_its_bound(engine: sa.Engine) -> None:
    """Trimming the log with every write made its DELETE walk the index over the rows the
    last writes had just removed: it now runs when the identities cross a tenth of the bound,
    so the log holds at least the newest `keep` calls and fewer than `keep` plus a tenth."""
    log = SqlToolCalls(engine)
    deletes: list[str] = []

    def seen(_c: object, _cursor: object, statement: str, *_rest: object) -> None:
        if statement.lstrip().upper().startswith("DELETE"):
            deletes.append(statement)

    sa.event.listen(engine, "before_cursor_execute", seen)
    try:
        held: list[int] = []
        for n in range(250):
            log.append([_call(n)], keep=100)
            held.append(len(log.newest(1000)))
    finally:
        sa.event.remove(engine, "before_cursor_execute", seen)
    assert len(deletes) <= 250 // 10 + 1
    assert held[:100] == list(range(1, 101))
    assert all(100 <= count < 110 for count in held[100:])
    newest = [c.duration_us - 1000 for c in log.newest(1000)]
    assert newest == list(range(249, 249 - len(newest), -1))


def test_calls_written_together_are_kept_in_their_order_and_bounded(engine: sa.Engine) -> None:
    log = SqlToolCalls(engine)
    log.append([_call(n) for n in range(3)], keep=100)
    log.append([_call(n) for n in (9, 7, 8)], keep=5)
    kept = log.newest(100)
    assert [c.at.second for c in kept] == [8, 7, 9, 2, 1]
    ids = [c.call_id or 0 for c in kept]
    assert ids == sorted(ids, reverse=True)


def test_the_migration_goes_down_and_up_again(engine: sa.Engine) -> None:
    SqlApiKeys(engine).add(_key("a1" * 6), MOST)
    migrate.downgrade(engine, "0023_console")
    assert not sa.inspect(engine).has_table("console_api_keys")
    assert not sa.inspect(engine).has_table("console_tool_calls")
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION
    assert SqlApiKeys(engine).active() == []
