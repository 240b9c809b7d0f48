"""The callers' keys and recent calls as use cases over an SQLite store: a key shown once
admits as its entry until revoked, a form makes one key, an entry removed from the
configuration admits nothing, and recorded calls are paged newest first and bounded."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.caller_keys import SqlApiKeys, SqlToolCalls
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.app.console.caller_keys import (
    Admission,
    CallerKeys,
    KeyRefused,
    NewKey,
    Revoked,
    new_form_nonce,
)
from mailfathom.app.console.tool_calls import ToolCalls
from mailfathom.domain.access import ConfirmationMode, Permission, ToolCategory
from mailfathom.domain.api_keys import (
    MOST_KEYS_PER_CALLER,
    console_key_id,
    is_api_key_shaped,
    key_digest,
)
from mailfathom.domain.config import CallerEntry
from mailfathom.domain.console import FRESH_SIGN_IN_SECONDS

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
READER = CallerEntry(
    "reader",
    None,
    permissions=frozenset({Permission.MAIL_READ}),
    confirmation=ConfirmationMode.ASK,
)
FILED = CallerEntry("filed", "ab" * 32)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[sa.Engine]:
    created = create_store_engine(sqlite_url(tmp_path / "store.sqlite3"))
    migrate.upgrade(created)
    yield created
    created.dispose()


def _keys(engine: sa.Engine, *entries: CallerEntry) -> CallerKeys:
    return CallerKeys(SqlApiKeys(engine), entries or (READER, FILED), clock=lambda: NOW)


def _created(keys: CallerKeys, caller: str = "reader") -> NewKey:
    made = keys.create(caller, new_form_nonce(), NOW)
    assert isinstance(made, NewKey)
    return made


def test_a_created_key_admits_as_its_entry_and_only_its_digest_is_kept(
    engine: sa.Engine,
) -> None:
    keys = _keys(engine)
    made = _created(keys)
    assert is_api_key_shaped(made.key)
    assert console_key_id(made.key) == made.issued.key_id
    assert len(made.key) > 50
    assert keys.admit(made.key) == READER
    with engine.connect() as c:
        stored = [
            tuple(str(v) for v in row)
            for row in c.exec_driver_sql("SELECT * FROM console_api_keys")
        ]
    assert not any(made.key in value for row in stored for value in row)
    assert any(key_digest(made.key) in row for row in stored)
    # Another key's secret under the same identifier is not this key.
    forged = made.key[:-4] + ("AAAA" if not made.key.endswith("AAAA") else "BBBB")
    assert keys.admit(forged) is None
    assert keys.admit("mf-" + "x" * 40) is None
    assert keys.admit("not a key") is None


def test_a_revoked_key_admits_nothing_from_the_next_check_on(engine: sa.Engine) -> None:
    keys = _keys(engine)
    made = _created(keys)
    other = _created(keys)
    assert _keys(engine).revoke(made.issued.key_id, NOW) is Revoked.NOW
    assert keys.admit(made.key) is None
    assert keys.admit(other.key) == READER
    assert keys.revoke(made.issued.key_id, NOW) is Revoked.NOT_ACTIVE
    assert keys.revoke("0" * 12, NOW) is Revoked.NOT_ACTIVE
    assert [k.key_id for k in keys.listing().callers[0].keys] == [other.issued.key_id]


def test_one_form_makes_one_key_and_an_unknown_entry_none(engine: sa.Engine) -> None:
    keys = _keys(engine)
    nonce = new_form_nonce()
    assert isinstance(keys.create("reader", nonce, NOW), NewKey)
    assert keys.create("reader", nonce, NOW) is KeyRefused.FORM_USED
    assert keys.create("reader", "not a nonce", NOW) is KeyRefused.FORM_USED
    assert keys.create("stranger", new_form_nonce(), NOW) is KeyRefused.NO_SUCH_CALLER
    assert len(SqlApiKeys(engine).active()) == 1


def test_a_key_of_an_entry_no_longer_configured_admits_nothing(engine: sa.Engine) -> None:
    made = _created(_keys(engine))
    without = _keys(engine, FILED)
    assert without.admit(made.key) is None
    listing = without.listing()
    assert [k.key_id for k in listing.orphaned] == [made.issued.key_id]
    assert without.revoke(made.issued.key_id, NOW) is Revoked.NOW
    assert without.listing().orphaned == ()


def test_the_listing_shows_each_entry_as_configured(engine: sa.Engine) -> None:
    listing = _keys(engine).listing()
    assert listing.published == frozenset(ToolCategory)
    narrowed = CallerKeys(SqlApiKeys(engine), (READER,), published=frozenset({ToolCategory.FLAGS}))
    assert narrowed.listing().published == {ToolCategory.FLAGS}
    reader, filed = listing.callers
    assert (reader.entry, reader.admission, reader.file_key_digest) == (
        READER,
        Admission.OPEN,
        None,
    )
    assert (filed.admission, filed.file_key_digest) == (Admission.API_KEY, "ab" * 32)


def test_calls_are_recorded_paged_and_bounded(engine: sa.Engine) -> None:
    calls = ToolCalls(SqlToolCalls(engine), clock=lambda: NOW, keep=30)
    for n in range(35):
        calls.record("list_accounts", "reader" if n % 2 else "other", "success", None, 0.002)
    calls.record("unrecognized", "reader", "unknownTool", None, 0.0001)
    first = calls.page(size=20)
    assert len(first.calls) == 20
    assert first.calls[0].tool == "unrecognized"
    assert first.calls[0].duration_us == 100
    assert first.calls[1].duration_us == 2000
    assert first.older is not None
    second = calls.page(before=first.older, size=20)
    assert len(second.calls) == 10
    assert second.older is None
    assert first.callers == ("other", "reader")
    assert [c.outcome for c in calls.page(outcome="unknownTool").calls] == ["unknownTool"]
    assert len(calls.page(outcome="anything else").calls) == 30
    assert {c.caller for c in calls.page(caller="other").calls} == {"other"}


def test_a_key_is_made_only_for_a_sign_in_made_lately(engine: sa.Engine) -> None:
    keys = _keys(engine)
    long_ago = NOW - timedelta(seconds=FRESH_SIGN_IN_SECONDS + 1)
    assert keys.create("reader", new_form_nonce(), long_ago) is KeyRefused.SIGN_IN_AGAIN
    assert keys.listing().callers[0].keys == ()
    lately = NOW - timedelta(seconds=FRESH_SIGN_IN_SECONDS)
    assert isinstance(keys.create("reader", new_form_nonce(), lately), NewKey)


def test_a_key_is_revoked_only_for_a_sign_in_made_lately(engine: sa.Engine) -> None:
    keys = _keys(engine)
    made = _created(keys)
    long_ago = NOW - timedelta(seconds=FRESH_SIGN_IN_SECONDS + 1)
    assert keys.revoke(made.issued.key_id, long_ago) is KeyRefused.SIGN_IN_AGAIN
    assert keys.admit(made.key) == READER
    lately = NOW - timedelta(seconds=FRESH_SIGN_IN_SECONDS)
    assert keys.revoke(made.issued.key_id, lately) is Revoked.NOW
    assert keys.admit(made.key) is None


def test_an_entry_holds_at_most_its_bound_of_active_keys(engine: sa.Engine) -> None:
    keys = _keys(engine)
    held = [_created(keys) for _ in range(MOST_KEYS_PER_CALLER - 1)]
    assert not keys.listing().callers[0].full
    held.append(_created(keys))
    assert keys.create("reader", new_form_nonce(), NOW) is KeyRefused.TOO_MANY
    assert len(SqlApiKeys(engine).active()) == MOST_KEYS_PER_CALLER
    reader, filed = keys.listing().callers
    assert (reader.full, filed.full) == (True, False)
    # Another entry's keys are counted apart.
    assert isinstance(keys.create("filed", new_form_nonce(), NOW), NewKey)
    # A revoked key makes room for one more.
    assert keys.revoke(held[0].issued.key_id, NOW) is Revoked.NOW
    assert isinstance(keys.create("reader", new_form_nonce(), NOW), NewKey)
    assert keys.create("reader", new_form_nonce(), NOW) is KeyRefused.TOO_MANY
