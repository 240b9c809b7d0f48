"""A replica of `mailfathom serve` reads every time it writes or compares on the store's
clock, not its machine's: what another machine's process wrote (a console session, a
question's time asked) is live or expired for both at the same instant."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.mcp.confirmation import Questions
from mailfathom.entrypoints.mcp.run import shared_state
from sending.helpers import sending_config


def test_a_replica_whose_clock_runs_a_day_ahead_reads_sessions_and_questions_alike(
    tmp_path: Path, migrated_postgres_url: str
) -> None:
    config = load_config(
        sending_config(tmp_path, None, deployment=f'DatabaseUrl = "{migrated_postgres_url}"')
    )
    with (
        Services.open(config) as here,
        Services.open(
            config, migrate_schema=False, clock=lambda: datetime.now(UTC) + timedelta(days=1)
        ) as ahead,
    ):
        asked_here = Questions(60, 2, shared_state(here))
        asked_ahead = Questions(60, 2, shared_state(ahead))
        opened_here = here.console_access().visit()
        assert ahead.console_access().session(opened_here.token) is not None
        opened_ahead = ahead.console_access().visit()
        assert here.console_access().session(opened_ahead.token) is not None
        assert abs(ahead.clock() - here.clock()) < timedelta(seconds=5)
        assert abs(asked_ahead.now() - asked_here.now()) < 5
