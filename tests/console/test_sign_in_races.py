"""The wrong-password bound under sign-ins sent at once, in real threads, on SQLite and
PostgreSQL: a try is counted before its password is hashed, so tries racing through the
same moment are held as tries made one after another are, and argon2 never runs more than
a couple of hashes at a time, whatever the number of requests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

import pytest
from argon2 import PasswordHasher

import log_audit
from console.conftest import PASSWORD, Clock
from console.test_drafts_page import drafts_config
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.console_password import HASHES_AT_ONCE, Argon2Passwords
from mailfathom.adapters.sql.console import SqlConsoleStore
from mailfathom.app.console.ports import EVERY_CLIENT
from mailfathom.app.console.signing_in import ConsoleAccess, Refused, SignInRefused, Visit
from mailfathom.bootstrap import Services
from mailfathom.domain.console import FREE_FAILURES_OVERALL, FREE_FAILURES_PER_CLIENT

AT_ONCE = 12


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Services, Clock]]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    log_audit.register_all([PASSWORD])
    clock = Clock()
    with Services.open(load_config(drafts_config(tmp_path, database_url=url)), clock=clock) as s:
        s.console_access().set_password(PASSWORD)
        yield s, clock


def _at_once(access: ConsoleAccess, tries: list[tuple[str, str]]) -> list[Visit | Refused]:
    """Every (password, client) try, each in a thread of its own, let go together once every
    one has its form."""
    forms = [access.visit() for _ in tries]
    start = threading.Barrier(len(tries))

    def one(n: int) -> Visit | Refused:
        password, client = tries[n]
        start.wait()
        return access.sign_in(forms[n].token, forms[n].session.csrf_secret, password, client)

    with ThreadPoolExecutor(len(tries)) as pool:
        return list(pool.map(one, range(len(tries))))


def test_wrong_passwords_sent_at_once_by_one_client_get_only_the_free_tries(
    opened: tuple[Services, Clock],
) -> None:
    services, _ = opened
    access = services.console_access()
    outcomes = _at_once(access, [("not the owner password", "192.0.2.1")] * AT_ONCE)
    hashed = [o for o in outcomes if o == Refused(SignInRefused.MISMATCH)]
    held = [o for o in outcomes if isinstance(o, Refused) and o.reason is SignInRefused.WAIT]
    assert len(hashed) == FREE_FAILURES_PER_CLIENT
    assert len(held) == AT_ONCE - FREE_FAILURES_PER_CLIENT
    assert all(o.retry_after_seconds > 0 for o in held)
    assert isinstance(_at_once(access, [(PASSWORD, "192.0.2.1")])[0], Refused)


def test_tries_sent_at_once_from_many_clients_get_only_the_free_tries_overall(
    opened: tuple[Services, Clock],
) -> None:
    services, _ = opened
    access = services.console_access()
    clients = FREE_FAILURES_OVERALL + 6
    outcomes = _at_once(
        access, [("not the owner password", f"192.0.2.{n}") for n in range(clients)]
    )
    hashed = [o for o in outcomes if o == Refused(SignInRefused.MISMATCH)]
    assert len(hashed) == FREE_FAILURES_OVERALL
    assert all(isinstance(o, Refused) for o in outcomes)


def test_a_right_password_after_the_wait_signs_in_and_forgets_the_tries(
    opened: tuple[Services, Clock],
) -> None:
    services, clock = opened
    access = services.console_access()
    _at_once(access, [("not the owner password", "192.0.2.1")] * AT_ONCE)
    clock.advance(30)
    (first, *others) = _at_once(access, [(PASSWORD, "192.0.2.1")] * 3)
    signed_in = [o for o in (first, *others) if isinstance(o, Visit)]
    assert len(signed_in) == 1
    assert services.console_access().session(signed_in[0].token) is not None
    store = SqlConsoleStore(services.engine)
    assert store.failures("192.0.2.1") is None
    assert store.failures(EVERY_CLIENT) is None


class _Watched(PasswordHasher):
    """argon2-cffi's hasher, noting the most verifications running at one moment; each
    waits a moment so that verifications let through together overlap."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._running = 0
        self.most = 0
        self.go = threading.Event()

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        with self._lock:
            self._running += 1
            self.most = max(self.most, self._running)
        try:
            self.go.wait(0.5)
            return super().verify(hash, password)
        finally:
            with self._lock:
                self._running -= 1


def test_argon2_runs_only_a_few_hashes_at_a_time() -> None:
    watched = _Watched()
    passwords = Argon2Passwords(watched)
    stored = passwords.hash(PASSWORD)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: passwords.verify(stored, PASSWORD), range(8)))
    assert answers == [True] * 8
    assert 1 <= watched.most <= HASHES_AT_ONCE
