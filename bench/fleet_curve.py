"""Synchronization throughput against the number of sync workers (bench/fleet_simulation.py
--curve): the same accounts, with the same backlog, synchronized into a fresh database by 1,
2, 4 ... `mailfathom worker --role sync` processes in turn."""

from __future__ import annotations

import os
import secrets
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from fleet.chaos import Fleet
from fleet.checks import read_server
from fleet.deployment import SMTP_USER, Settings, add_accounts, write_config
from fleet.mail import Arrivals
from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.schema import messages
from servers._common import free_port
from servers.dovecot import DovecotServer
from servers.postgres import PostgresServer
from servers.smtp import SmtpServer

TIMEOUT = 1800.0


def curve(
    dovecots: list[DovecotServer],
    postgres: PostgresServer,
    work: Path,
    per_server: int,
    backlog: int,
    counts: list[int],
    say: Callable[[str], None],
) -> dict[str, Any]:
    tag = f"c{secrets.token_hex(3)}"
    accounts = add_accounts(dovecots, per_server, work, tag)
    arrivals = Arrivals(tag)
    for account in accounts:
        for _ in range(backlog):
            arrivals.deliver(account, backlog=True)
    expected = arrivals.count()
    # Dovecot indexes each folder on first access: done here, outside every measured round.
    on_servers = sum(len(view) for view in read_server(accounts).values())
    say(f"{len(accounts)} accounts, {expected} messages ({on_servers} read back)")
    smtp = SmtpServer({SMTP_USER: secrets.token_hex(12)}).start()
    rows: list[dict[str, Any]] = []
    try:
        for count in counts:
            root = work / f"workers-{count}"
            shutil.copytree(work / "secrets", root / "secrets")
            url = postgres.create_database(f"curve_{count}_{len(rows)}")
            engine = create_store_engine(url)
            migrate.upgrade(engine)
            settings = Settings(
                url, free_port(), secrets.token_urlsafe(8), 10.0, push=False, poll_seconds=3600
            )
            config = write_config(root, accounts, smtp, settings)
            fleet = Fleet(config, os.environ, root / "logs")
            started = time.monotonic()
            fleet.start("sync", count)
            first = None
            try:
                while (stored := _stored(engine)) < expected:
                    if first is None and stored:
                        first = time.monotonic() - started
                    if not fleet.running() or time.monotonic() - started > TIMEOUT:
                        raise RuntimeError(f"{count} workers stored {stored} of {expected}")
                    time.sleep(0.25)
                seconds = time.monotonic() - started
            finally:
                fleet.stop_all()
                engine.dispose()
            rows.append(
                {
                    "workers": count,
                    "messages": expected,
                    "seconds": round(seconds, 1),
                    "first_stored_after_s": round(first or 0.0, 1),
                    "per_second": round(expected / seconds, 1),
                }
            )
            say(f"{count} sync workers: {rows[-1]}")
    finally:
        smtp.close()
    base = rows[0]["per_second"]
    for row in rows:
        row["ratio_to_one"] = round(row["per_second"] / base, 2)
    return {"accounts": len(accounts), "backlog_each": backlog, "rows": rows}


def _stored(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one())
