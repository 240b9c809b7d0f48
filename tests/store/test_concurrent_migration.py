"""Several processes opening one fresh store at once bring it to the newest schema once."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import queue
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url

PROCESSES = 6
DEADLINE_SECONDS = 120


def _open_and_migrate(
    url: str, start: multiprocessing.synchronize.Barrier, answers: multiprocessing.Queue[str]
) -> None:
    engine = create_store_engine(url)
    try:
        start.wait(DEADLINE_SECONDS)
        migrated = migrate.upgrade(engine)
        answers.put("migrated" if migrated else "current")
    except Exception as exc:
        answers.put(f"failed: {type(exc).__name__}")
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "store.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_processes_opening_one_fresh_store_at_once_migrate_it_once(fresh_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(PROCESSES)
    answers: multiprocessing.Queue[str] = context.Queue()
    workers = [
        context.Process(target=_open_and_migrate, args=(fresh_url, start, answers))
        for _ in range(PROCESSES)
    ]
    for worker in workers:
        worker.start()
    outcomes: list[str] = []
    try:
        for _ in workers:
            outcomes.append(answers.get(timeout=DEADLINE_SECONDS))
    except queue.Empty:
        pytest.fail(f"only {len(outcomes)} of {PROCESSES} processes answered: {outcomes}")
    finally:
        for worker in workers:
            worker.join(DEADLINE_SECONDS)
            if worker.is_alive():
                worker.kill()
                worker.join()

    assert sorted(outcomes) == ["current"] * (PROCESSES - 1) + ["migrated"]
    assert all(worker.exitcode == 0 for worker in workers)
    engine = create_store_engine(fresh_url)
    try:
        with engine.connect() as c:
            versions = c.exec_driver_sql("SELECT version_num FROM alembic_version").scalars()
            assert list(versions) == [migrate.head_revision()]
            assert sa.inspect(c).has_table("messages")
    finally:
        engine.dispose()
