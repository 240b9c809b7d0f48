"""What replicas of the MCP endpoint rely on from the store, on SQLite and PostgreSQL: a
caller's bound on sessions and questions counted over every replica's places, idle places
falling out of the count, a session described once opened and found by its id, and an
answer handed only to the replicas waiting on a question in its session; on PostgreSQL,
a replica clearing old rows passes those another one holds instead of waiting on them."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.replicas import SqlSharedQuestions, SqlSharedSessions
from mailfathom.adapters.sql.schema import mcp_sessions
from waiting import wait_for

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
IDLE = timedelta(seconds=300)


def test_a_callers_sessions_are_bounded_over_every_place_taken(engine: sa.Engine) -> None:
    sessions = SqlSharedSessions(engine)
    assert sessions.reserve("r1", "agent", T0, T0 - IDLE, 2)
    assert sessions.reserve("r2", "agent", T0, T0 - IDLE, 2)
    assert not sessions.reserve("r3", "agent", T0, T0 - IDLE, 2)
    assert sessions.reserve("r4", "other", T0, T0 - IDLE, 2)
    sessions.release("r2")
    assert sessions.reserve("r5", "agent", T0, T0 - IDLE, 2)
    later = T0 + IDLE
    assert sessions.reserve("r6", "agent", later, later - IDLE, 2)
    assert sessions.first_used("agent", later - IDLE) == later


def test_a_described_session_is_found_while_in_use_and_gone_once_closed(
    engine: sa.Engine,
) -> None:
    sessions = SqlSharedSessions(engine)
    sessions.reserve("r1", "agent", T0, T0 - IDLE, 4)
    assert sessions.find("s1", T0 - IDLE) is None
    sessions.describe("r1", "s1", None, "2025-11-25", '{"protocolVersion":"x"}', T0)
    found = sessions.find("s1", T0 - IDLE)
    assert found is not None
    assert (found.caller, found.protocol_version, found.principal) == (
        "agent",
        "2025-11-25",
        None,
    )
    assert sessions.find("s1", T0) is None
    sessions.touch(["s1"], T0 + IDLE)
    assert sessions.find("s1", T0 + timedelta(seconds=1)) is not None
    sessions.close("s1")
    assert sessions.find("s1", T0 - IDLE) is None


def test_questions_are_bounded_per_caller_over_every_replica(engine: sa.Engine) -> None:
    questions = SqlSharedQuestions(engine)
    since = T0 - IDLE
    assert questions.hold("q1", "agent", "s1", "A", T0, since, 2)
    assert questions.hold("q2", "agent", "s2", "B", T0, since, 2)
    assert not questions.hold("q3", "agent", "s1", "B", T0, since, 2)
    assert questions.waiting("agent", since) == 2
    questions.release("q1")
    assert questions.hold("q3", "agent", "s1", "B", T0, since, 2)
    assert questions.hold("q4", "agent", "s1", "B", T0 + IDLE, T0, 2)
    assert questions.waiting("agent", T0) == 1


def test_an_answer_goes_only_to_the_replicas_waiting_in_its_session(engine: sa.Engine) -> None:
    questions = SqlSharedQuestions(engine)
    since = T0 - IDLE
    questions.hold("q1", "agent", "s1", "A", T0, since, 4)
    assert questions.route("s2", '{"id":1}', T0, since) == 0
    assert questions.route("s1", '{"id":2}', T0, since) == 1
    assert questions.collect("B") == []
    assert questions.collect("A") == [("s1", '{"id":2}')]
    assert questions.collect("A") == []


def test_clearing_passes_rows_another_transaction_holds(migrated_postgres_url: str) -> None:
    engine = create_store_engine(migrated_postgres_url)
    try:
        sessions = SqlSharedSessions(engine)
        assert sessions.reserve("old", "agent", T0, T0 - IDLE, 4)
        later = T0 + 2 * IDLE
        taken: list[bool] = []
        with engine.connect() as holder, holder.begin():
            holder.execute(
                sa.select(mcp_sessions).where(mcp_sessions.c.reservation == "old").with_for_update()
            )
            other = threading.Thread(
                target=lambda: taken.append(
                    sessions.reserve("new", "other", later, later - IDLE, 4)
                )
            )
            other.start()
            wait_for(lambda: taken, "a place was taken beside a row another replica holds")
        other.join()
        with engine.connect() as c:
            left = set(c.execute(sa.select(mcp_sessions.c.reservation)).scalars())
        assert left == {"old", "new"}
    finally:
        engine.dispose()
