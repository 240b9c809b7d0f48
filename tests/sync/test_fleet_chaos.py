"""The fleet simulation of bench/fleet_simulation.py, short: 12 accounts on one Dovecot, two
sync workers and one delivery worker on one PostgreSQL, one killed (SIGKILL) every four to eight
seconds and replaced while agents flag, move, draft and send over MCP and mail keeps arriving.
Afterwards nothing is lost, doubled, sent twice or never, every change is carried once, and
every folder stored is what the server holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet.run import Scale, simulate
from log_audit import register_all
from servers.dovecot import DovecotServer

pytestmark = [pytest.mark.soak, pytest.mark.timeout(600)]

SCALE = Scale(
    per_server=12,
    initial_each=3,
    sync_workers=2,
    delivery_workers=1,
    agents=2,
    agent_pause=0.2,
    arrivals_per_second=2.0,
    seconds=75.0,
    kill_between=(4.0, 8.0),
    lease_seconds=3.0,
    converge_seconds=120.0,
)


def test_workers_killed_at_random_lose_double_and_skip_nothing(
    tmp_path: Path, dovecot: DovecotServer, migrated_postgres_url: str
) -> None:
    register_all(
        ["A few plain words, the same in every arrival.", "Fleet note number", "fleet.example"]
    )
    outcome = simulate(SCALE, [dovecot], migrated_postgres_url, tmp_path, print)
    figures = outcome.figures
    print(figures)
    assert outcome.verdict.failed == [], figures
    assert sum(figures["workers_killed"].values()) >= 6, "the chaos did not run"
    intents = figures["agent_intents"]
    assert min(intents["flagged"], intents["moved"], intents["sends_queued"]) > 0, intents
