"""One fleet simulation, from the first account made to the verdict: mail delivered before
and during the run, a `serve` the agents call over HTTP, sync and delivery workers killed at
random, then a bounded wait for the survivors to converge and the checks of `fleet.checks`."""

from __future__ import annotations

import os
import random
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from fleet.agents import Agents
from fleet.chaos import Fleet, chaos, wait_until
from fleet.checks import Verdict, judge
from fleet.deployment import SMTP_USER, FleetAccount, Settings, add_accounts, write_config
from fleet.mail import Arrivals
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.schema import messages
from mcp_tests.client import call
from servers._common import free_port
from servers.dovecot import DovecotServer
from servers.smtp import SmtpServer
from sync.workers import stop as stop_process

Say = Callable[[str], None]
SERVE = (sys.executable, "-m", "mailfathom", "serve", "--no-sync", "--no-deliver")


@dataclass(frozen=True)
class Scale:
    per_server: int = 100
    initial_each: int = 3
    sync_workers: int = 4
    delivery_workers: int = 2
    agents: int = 3
    agent_pause: float = 0.3
    arrivals_per_second: float = 3.0
    seconds: float = 600.0
    kill_between: tuple[float, float] = (2.0, 6.0)
    lease_seconds: float = 10.0
    converge_seconds: float = 300.0
    push: bool = True
    seed: int = 32


@dataclass
class Outcome:
    verdict: Verdict
    figures: dict[str, Any] = field(default_factory=dict)


def simulate(
    scale: Scale, servers: list[DovecotServer], database_url: str, root: Path, say: Say
) -> Outcome:
    rng = random.Random(scale.seed)
    tag = f"f{secrets.token_hex(3)}"
    accounts = add_accounts(servers, scale.per_server, root, tag)
    arrivals = Arrivals(tag)
    for account in accounts:
        for _ in range(scale.initial_each):
            arrivals.deliver(account)
    say(f"{len(accounts)} accounts on {len(servers)} servers, {arrivals.count()} messages")
    with (
        _capture() as smtp,
        _deployment(root, accounts, smtp, database_url, scale) as (config, url, key, env),
    ):
        engine = create_store_engine(database_url)
        fleet = Fleet(config, env, root / "logs")
        try:
            fleet.start("sync", scale.sync_workers)
            fleet.start("delivery", scale.delivery_workers)
            agents = Agents(url, key, engine, accounts, scale.seed)
            started = time.monotonic()
            _run(scale, fleet, agents, arrivals, accounts, rng, engine, say)
            chaos_seconds = time.monotonic() - started
            say(f"chaos over: {dict(fleet.killed)} killed; waiting for the survivors")
            verdict, waited = _converge(scale, engine, accounts, arrivals, agents, smtp, say)
        finally:
            exits = fleet.stop_all()
            engine.dispose()
    figures = {
        "scale": asdict(scale),
        "accounts": len(accounts),
        "servers": len(servers),
        "chaos_seconds": round(chaos_seconds, 1),
        "workers_killed": dict(fleet.killed),
        "agent_acts": dict(agents.intents.acts),
        "agent_intents": agents.intents.figures(),
        "converge_wait_seconds": round(waited, 1),
        "worker_exit_codes_at_stop": sorted(set(exits.values())),
        "checks": verdict.figures,
        "failed": verdict.failed,
        "examples": verdict.examples,
    }
    return Outcome(verdict, figures)


def _run(
    scale: Scale,
    fleet: Fleet,
    agents: Agents,
    arrivals: Arrivals,
    accounts: list[FleetAccount],
    rng: random.Random,
    engine: sa.Engine,
    say: Say,
) -> None:
    stop = threading.Event()
    threads = [
        threading.Thread(target=agents.run, args=(stop, scale.agent_pause), daemon=True)
        for _ in range(scale.agents)
    ]
    threads.append(
        threading.Thread(
            target=_arrive, args=(arrivals, accounts, scale, stop, rng.random()), daemon=True
        )
    )
    threads.append(
        threading.Thread(
            target=chaos,
            args=(fleet, stop, random.Random(rng.random()), scale.kill_between),
            daemon=True,
        )
    )
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + scale.seconds
    try:
        while not stop.wait(min(30.0, max(0.0, deadline - time.monotonic()))):
            say(
                f"stored {_stored(engine)} of {arrivals.count()} delivered; "
                f"acts {sum(agents.intents.acts.values())}; killed {dict(fleet.killed)}; "
                f"running {dict(fleet.running())}"
            )
            if time.monotonic() >= deadline:
                break
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=120)


def _arrive(
    arrivals: Arrivals,
    accounts: list[FleetAccount],
    scale: Scale,
    stop: threading.Event,
    seed: float,
) -> None:
    rng = random.Random(seed)
    while not stop.wait(rng.expovariate(scale.arrivals_per_second)):
        arrivals.deliver(rng.choice(accounts))


def _stored(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one())


def _converge(
    scale: Scale,
    engine: sa.Engine,
    accounts: list[FleetAccount],
    arrivals: Arrivals,
    agents: Agents,
    smtp: SmtpServer,
    say: Say,
) -> tuple[Verdict, float]:
    """Judge the run every few seconds until it passes or `converge_seconds` are over; the
    last verdict and how long was waited."""
    started = time.monotonic()
    last: list[Verdict] = []

    def passed() -> bool:
        verdict = judge(
            engine,
            accounts,
            arrivals.delivered(),
            agents.intents,
            (r.content for r in smtp.received()),
        )
        last[:] = [verdict]
        if verdict.failed:
            say(f"not yet: {[(n, verdict.figures[n]) for n in verdict.failed]}")
        return not verdict.failed

    wait_until(passed, scale.converge_seconds, every=5.0)
    return last[0], time.monotonic() - started


@contextmanager
def _capture() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: secrets.token_hex(12)}).start()
    try:
        yield server
    finally:
        server.close()


@contextmanager
def _deployment(
    root: Path,
    accounts: list[FleetAccount],
    smtp: SmtpServer,
    database_url: str,
    scale: Scale,
) -> Iterator[tuple[Path, str, str, dict[str, str]]]:
    """The configuration, and a `serve --no-sync --no-deliver` over it for the agents: its
    path, the MCP URL, the agents' key and the environment of every process."""
    key = secrets.token_urlsafe(24)
    port = free_port()
    settings = Settings(database_url, port, key, scale.lease_seconds, push=scale.push)
    config = write_config(root, accounts, smtp, settings)
    env = {**os.environ, "SSL_CERT_FILE": str(smtp.ca_path)}
    (root / "logs").mkdir(parents=True, exist_ok=True)
    with (root / "logs" / "serve.log").open("ab") as log:
        serve = subprocess.Popen(
            [*SERVE, "--config", str(config)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        failures: list[BaseException] = []
        if not wait_until(lambda: _answers(url, key, serve, failures), 120, every=1.0):
            raise RuntimeError("serve did not answer within two minutes") from failures[-1]
        yield config, url, key, env
    finally:
        stop_process(serve)


def _answers(
    url: str, key: str, serve: subprocess.Popen[bytes], failures: list[BaseException]
) -> bool:
    if serve.poll() is not None:
        raise RuntimeError(f"serve ended with {serve.returncode}")
    try:
        return not call(url, key, "list_accounts").is_error
    except Exception as failure:
        failures[:] = [failure]
        return False
