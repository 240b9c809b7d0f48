"""What the console's passkeys rely on from the store, on SQLite and PostgreSQL: passkeys
kept by credential id and no more than their bound (also against adds at once), a first
enrolment only while the owner has no credential (and only
one of two at once), a signature count that moves only from the value a verification saw, a
challenge per session and ceremony given back once and only until it expires; and the 0026
migration both ways."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.console import SqlConsoleStore
from mailfathom.adapters.sql.console_passkeys import SqlPasskeyStore
from mailfathom.adapters.sql.schema import console_passkeys
from mailfathom.app.console.passkey_ports import Ceremony, Passkey, TooManyPasskeys
from mailfathom.app.console.ports import ConsoleSession

from .overlapping_writes import overlapped

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)
MOST = 20


def _passkey(credential_id: str, *, at: datetime = T0, count: int = 0) -> Passkey:
    return Passkey(
        credential_id=credential_id,
        user_handle="handle",
        public_key=b"\xa5\x01\x02" + credential_id.encode(),
        sign_count=count,
        label="Laptop ✓",
        created_at=at,
    )


def test_passkeys_are_kept_by_credential_id_oldest_first(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    long_id = "L" * 1364
    assert store.add_passkey(_passkey("b", at=T0 + MINUTE), only_if_first=False, most=MOST)
    assert store.add_passkey(_passkey(long_id), only_if_first=False, most=MOST)
    assert not store.add_passkey(_passkey("b"), only_if_first=False, most=MOST)
    assert [p.credential_id for p in store.passkeys()] == [long_id, "b"]
    assert store.passkey("b") == _passkey("b", at=T0 + MINUTE)
    assert store.passkey("c") is None
    assert store.remove_passkey("b", keep="") is True
    assert store.remove_passkey("b", keep="") is False


def test_the_owner_holds_at_most_the_bound_of_passkeys(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    for n in range(3):
        assert store.add_passkey(_passkey(f"k{n}"), only_if_first=False, most=3)
    with pytest.raises(TooManyPasskeys):
        store.add_passkey(_passkey("k3"), only_if_first=False, most=3)
    assert store.passkey("k3") is None
    assert store.remove_passkey("k0", keep="")
    assert store.add_passkey(_passkey("k3"), only_if_first=False, most=3)
    assert [p.credential_id for p in store.passkeys()] == ["k1", "k2", "k3"]


def test_of_two_passkeys_added_at_once_for_the_last_place_one_is_kept(
    engine: sa.Engine,
) -> None:
    """The count is taken in the transaction that writes, with writers of passkeys
    serialized: a second add counting while the first has written but not committed waits
    for it."""
    store = SqlPasskeyStore(engine)
    for n in range(4):
        assert store.add_passkey(_passkey(f"k{n}"), only_if_first=False, most=5)
    first, second = overlapped(
        engine,
        lambda: store.add_passkey(_passkey("r1"), only_if_first=False, most=5),
        lambda: store.add_passkey(_passkey("r2"), only_if_first=False, most=5),
        at=f"^INSERT INTO {console_passkeys.name} ",
    )
    assert first is True
    assert isinstance(second, TooManyPasskeys)
    assert len(store.passkeys()) == 5


def _session(token_hash: str, *, signed_in: bool = True) -> ConsoleSession:
    return ConsoleSession(token_hash, "csrf", signed_in, T0, T0 + 60 * MINUTE)


def test_removing_a_passkey_ends_every_session_but_the_one_kept(engine: sa.Engine) -> None:
    store, sessions = SqlPasskeyStore(engine), SqlConsoleStore(engine)
    assert store.add_passkey(_passkey("a"), only_if_first=False, most=MOST)
    for name, signed_in in (("owner", True), ("copied", True), ("form", False)):
        sessions.open_session(_session(name, signed_in=signed_in), T0)
    assert store.remove_passkey("missing", keep="owner") is False
    assert sessions.find_session("copied", T0) is not None
    assert store.remove_passkey("a", keep="owner") is True
    assert sessions.find_session("owner", T0) is not None
    assert sessions.find_session("copied", T0) is None
    assert sessions.find_session("form", T0) is None


def test_a_first_enrolment_needs_an_owner_without_credentials(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    SqlConsoleStore(engine).set_owner_password("$argon2id$x", T0)
    assert not store.add_passkey(_passkey("a"), only_if_first=True, most=MOST)
    assert store.passkeys() == []


def test_of_two_first_enrolments_at_once_one_is_kept(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    store.open_first_enrolment("code", T0 + MINUTE)
    start = threading.Barrier(6)
    kept: list[bool] = []

    def enrol(n: int) -> None:
        start.wait()
        kept.append(
            store.add_passkey(_passkey(f"k{n}"), only_if_first=True, most=MOST, first_code="code")
        )

    threads = [threading.Thread(target=enrol, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(kept) == [False] * 5 + [True]
    assert len(store.passkeys()) == 1


def test_a_count_moves_only_from_the_value_seen(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    store.add_passkey(_passkey("a", count=4), only_if_first=False, most=MOST)
    assert store.record_use("a", 4, 5, T0 + MINUTE)
    assert not store.record_use("a", 4, 6, T0 + 2 * MINUTE)
    assert not store.record_use("gone", 0, 1, T0)
    found = store.passkey("a")
    assert found is not None
    assert (found.sign_count, found.last_used_at) == (5, T0 + MINUTE)


def _opened(engine: sa.Engine, *letters: str) -> None:
    for letter in letters:
        SqlConsoleStore(engine).open_session(_session(letter * 64, signed_in=False), T0)


def test_a_challenge_is_given_back_once_to_its_session_and_ceremony(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    _opened(engine, "s", "t")
    store.issue_challenge("s" * 64, Ceremony.SIGN_IN, "first", T0, MINUTE)
    store.issue_challenge("s" * 64, Ceremony.SIGN_IN, "second", T0, MINUTE)
    store.issue_challenge("s" * 64, Ceremony.REGISTER, "enrol", T0, MINUTE)
    assert store.take_challenge("t" * 64, Ceremony.SIGN_IN, T0) is None
    assert store.take_challenge("s" * 64, Ceremony.SIGN_IN, T0) == "second"
    assert store.take_challenge("s" * 64, Ceremony.SIGN_IN, T0) is None
    assert store.take_challenge("s" * 64, Ceremony.REGISTER, T0) == "enrol"


def test_an_expired_challenge_is_not_given_and_is_deleted_at_the_next_issue(
    engine: sa.Engine,
) -> None:
    store = SqlPasskeyStore(engine)
    _opened(engine, "s", "t", "u")
    store.issue_challenge("s" * 64, Ceremony.SIGN_IN, "old", T0, MINUTE)
    store.issue_challenge("u" * 64, Ceremony.SIGN_IN, "stale", T0, MINUTE)
    assert store.take_challenge("s" * 64, Ceremony.SIGN_IN, T0 + MINUTE) is None
    store.issue_challenge("t" * 64, Ceremony.SIGN_IN, "new", T0 + MINUTE, MINUTE)
    with engine.connect() as c:
        left = c.execute(sa.text("SELECT challenge FROM console_challenges")).scalars().all()
    assert left == ["new"]


def test_a_challenge_of_a_session_no_longer_kept_is_deleted_at_the_next_issue(
    engine: sa.Engine,
) -> None:
    store = SqlPasskeyStore(engine)
    _opened(engine, "s", "t")
    store.issue_challenge("s" * 64, Ceremony.SIGN_IN, "ended", T0, MINUTE)
    SqlConsoleStore(engine).end_session("s" * 64)
    store.issue_challenge("t" * 64, Ceremony.SIGN_IN, "kept", T0, MINUTE)
    with engine.connect() as c:
        left = c.execute(sa.text("SELECT challenge FROM console_challenges")).scalars().all()
    assert left == ["kept"]


def test_of_two_takers_at_once_one_gets_the_challenge(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    _opened(engine, "s")
    store.issue_challenge("s" * 64, Ceremony.SIGN_IN, "only", T0, MINUTE)
    start = threading.Barrier(6)
    got: list[str | None] = []

    def take() -> None:
        start.wait()
        got.append(store.take_challenge("s" * 64, Ceremony.SIGN_IN, T0))

    threads = [threading.Thread(target=take) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got, key=str) == [None] * 5 + ["only"]


def test_a_first_passkey_needs_the_code_waiting_and_takes_it(engine: sa.Engine) -> None:
    store = SqlPasskeyStore(engine)
    assert not store.first_enrolment_waiting(T0)
    assert not store.add_passkey(_passkey("a"), only_if_first=True, most=MOST, first_code=None)
    store.open_first_enrolment("old", T0 + 15 * MINUTE)
    store.open_first_enrolment("new", T0 + 15 * MINUTE)
    assert store.first_enrolment_waiting(T0)
    assert not store.first_enrolment_waiting(T0 + 15 * MINUTE)
    assert not store.add_passkey(_passkey("a"), only_if_first=True, most=MOST, first_code="old")
    late = _passkey("a", at=T0 + 15 * MINUTE)
    assert not store.add_passkey(late, only_if_first=True, most=MOST, first_code="new")
    assert store.add_passkey(_passkey("a"), only_if_first=True, most=MOST, first_code="new")
    assert not store.first_enrolment_waiting(T0)
    assert [p.credential_id for p in store.passkeys()] == ["a"]


def test_the_first_passkey_code_migration_goes_down_and_up_again(engine: sa.Engine) -> None:
    SqlPasskeyStore(engine).open_first_enrolment("code", T0 + MINUTE)
    migrate.downgrade(engine, "0026_console_passkeys")
    assert "console_first_passkey" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert not SqlPasskeyStore(engine).first_enrolment_waiting(T0)


def test_the_migration_goes_down_and_up_again(engine: sa.Engine) -> None:
    SqlPasskeyStore(engine).add_passkey(_passkey("a"), only_if_first=False, most=MOST)
    migrate.downgrade(engine, "0025_sync_failures")
    assert "console_passkeys" not in sa.inspect(engine).get_table_names()
    migrate.upgrade(engine)
    assert SqlPasskeyStore(engine).passkeys() == []
