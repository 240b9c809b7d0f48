"""What answering keeps: each caller's spending per period (`AnsweringLedger`) and the chat
role's health record, on SQLite, PostgreSQL and the in-memory fakes alike; and the 0022
migration both ways."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.answering import SqlAnsweringLedger, SqlChatHealth
from mailfathom.domain.answering import ChatFailure
from mailfathom.domain.codes import AnsweringCode

from .conftest import Backend

PERIOD = datetime(2026, 5, 1, tzinfo=UTC)
NEXT = PERIOD + timedelta(days=1)


def test_runs_are_counted_up_to_the_ceiling_per_caller_and_period(backend: Backend) -> None:
    ledger = backend.answering_ledger()
    admitted = [ledger.admit("agent", PERIOD, max_runs=3, max_tokens=100) for _ in range(4)]
    assert admitted == [True, True, True, False]
    assert ledger.admit("other", PERIOD, max_runs=3, max_tokens=100) is True
    assert ledger.admit("agent", NEXT, max_runs=3, max_tokens=100) is True


def test_tokens_add_up_and_a_spent_period_admits_no_run(backend: Backend) -> None:
    ledger = backend.answering_ledger()
    assert ledger.admit("agent", PERIOD, max_runs=10, max_tokens=100) is True
    assert ledger.spend("agent", PERIOD, 60) == 60
    assert ledger.admit("agent", PERIOD, max_runs=10, max_tokens=100) is True
    assert ledger.spend("agent", PERIOD, 40) == 100
    assert ledger.admit("agent", PERIOD, max_runs=10, max_tokens=100) is False
    assert ledger.spend("other", PERIOD, 5) == 5


def test_what_each_caller_spent_in_a_period_is_listed_by_caller(backend: Backend) -> None:
    ledger = backend.answering_ledger()
    ledger.admit("zed", PERIOD, max_runs=5, max_tokens=100)
    ledger.admit("agent", PERIOD, max_runs=5, max_tokens=100)
    ledger.admit("agent", PERIOD, max_runs=5, max_tokens=100)
    ledger.spend("agent", PERIOD, 30)
    assert ledger.spent(PERIOD) == [("agent", 2, 30), ("zed", 1, 0)]
    assert ledger.spent(NEXT) == []


def test_a_second_ledger_on_the_same_store_sees_what_the_first_counted(
    backend: Backend,
) -> None:
    backend.answering_ledger().admit("agent", PERIOD, max_runs=1, max_tokens=100)
    assert backend.answering_ledger().admit("agent", PERIOD, max_runs=1, max_tokens=100) is False
    assert backend.answering_ledger().spend("agent", PERIOD, 7) == 7


def test_racing_admissions_never_count_past_the_ceiling(backend: Backend) -> None:
    results: list[bool] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def admit() -> None:
        ledger = backend.answering_ledger()
        start.wait()
        for _ in range(3):
            admitted = ledger.admit("agent", PERIOD, max_runs=10, max_tokens=10**6)
            with lock:
                results.append(admitted)

    threads = [threading.Thread(target=admit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 14 + [True] * 10


def test_the_chat_health_record_keeps_the_first_time_until_an_answer_clears_it(
    backend: Backend,
) -> None:
    health = backend.chat_health()
    assert health.state() is None
    health.answered()
    health.failed(ChatFailure.REFUSED, PERIOD)
    health.failed(ChatFailure.REFUSED, NEXT)
    assert health.state() == (ChatFailure.REFUSED, AnsweringCode.CHAT_REFUSED, PERIOD)
    health.failed(ChatFailure.UNREACHABLE, NEXT)
    assert health.state() == (ChatFailure.UNREACHABLE, AnsweringCode.CHAT_UNREACHABLE, NEXT)
    health.answered()
    assert health.state() is None


def test_going_below_the_answering_revision_and_back(engine: sa.Engine) -> None:
    SqlAnsweringLedger(engine).admit("agent", PERIOD, max_runs=1, max_tokens=100)
    SqlChatHealth(engine).failed(ChatFailure.NO_TEXT, PERIOD)
    migrate.downgrade(engine, "0020_message_copies")
    tables = sa.inspect(engine).get_table_names()
    assert "answering_budget" not in tables
    assert "provider_health" not in tables
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.NEWEST_REVISION
    assert SqlAnsweringLedger(engine).admit("agent", PERIOD, max_runs=1, max_tokens=100)
    assert SqlChatHealth(engine).state() is None
