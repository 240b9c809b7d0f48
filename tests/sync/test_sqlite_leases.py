"""On SQLite, `serve` and `sync --continuous` hold the accounts' leases as they do on
PostgreSQL, so a pass run by hand never carries an account's owner changes beside them.

Real processes over the test Dovecot and one SQLite file: a pass beside a running `serve` or
`sync --continuous` is refused with 31008 and does nothing; once that process is SIGKILLed the
next pass goes on (its holder is gone, and the lease is far from expiring); and a `serve`
started while a pass holds the account waits for it, then takes the account over."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.adapters.sql.schema import lease_workers, messages
from mailfathom.bootstrap import Services
from mailfathom.entrypoints.workers.synchronization import holding_account
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import sample
from sync.workers import LEASE_SECONDS, holders, kill, stop, write_config
from waiting import wait_for

pytestmark = [pytest.mark.timeout(300)]

# Long enough that no lease of these tests expires while they look: a lease taken from a
# killed holder was taken because the holder is gone.
LONG_LEASE_SECONDS = 600


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        kill(process)


def _account(dovecot: DovecotServer) -> ImapAccount:
    tag = uuid.uuid4().hex[:8]
    return dovecot.add_user(f"sqlease{tag}", f"pw-{tag}")


def _database(root: Path) -> tuple[str, Path]:
    path = root / "store.sqlite3"
    return f"sqlite:///{path}", path


def _stored(engine: sa.Engine) -> Counter[str]:
    """How many rows each Message-ID has (none before the store is made)."""
    if not sa.inspect(engine).has_table("messages"):
        return Counter()
    with engine.connect() as c:
        return Counter(str(m) for m in c.execute(sa.select(messages.c.message_id_header)).scalars())


def _continuous(config: Path, command: str, log: Path) -> subprocess.Popen[bytes]:
    """`serve` (over HTTP, answering once it listens) or `sync --continuous`."""
    argv = [sys.executable, "-m", "mailfathom", command, "--config", str(config)]
    port = _free_port()
    argv += ["--port", str(port)] if command == "serve" else ["--continuous"]
    with log.open("ab") as out:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
    if command == "serve":
        try:
            _wait_for_port(port, process, timeout=180)
        except BaseException:
            kill(process)
            raise
    return process


def _pass(config: Path) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "mailfathom", "sync", "--config", str(config)]
    return subprocess.run(command, capture_output=True, timeout=120, check=False)


def _events(log: Path, *names: str) -> list[dict[str, object]]:
    found = []
    for line in log.read_text("utf-8", "replace").splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") in names or event.get("level") == "error":
                found.append(event)
    return found


@pytest.mark.parametrize("command", ["serve", "sync"])
def test_a_pass_beside_a_running_continuous_process_is_refused_until_it_is_killed(
    tmp_path: Path,
    dovecot: DovecotServer,
    processes: list[subprocess.Popen[bytes]],
    command: str,
) -> None:
    account = _account(dovecot)
    dovecot.save_message(account.username, sample("Before the server " + uuid.uuid4().hex[:6]))
    url, _ = _database(tmp_path)
    config = write_config(tmp_path, url, [account], lease_seconds=LONG_LEASE_SECONDS, served=True)
    running = _continuous(config, command, tmp_path / "running.log")
    processes.append(running)
    engine = create_store_engine(url)
    try:
        wait_for(lambda: sum(_stored(engine).values()) == 1, "the running process stored the mail")
        refused = _pass(config)
        assert refused.returncode == 2, refused.stderr
        assert b"31008" in refused.stderr
        assert holders(engine)["a0"] is not None, "the running process holds the account"

        kill(running)
        dovecot.save_message(account.username, sample("After the kill " + uuid.uuid4().hex[:6]))
        done = _pass(config)
        assert done.returncode == 0, done.stderr
        assert holders(engine) == {"a0": None}, "the pass gave the lease up"
        stored = _stored(engine)
        assert sum(stored.values()) == 2
        assert set(stored.values()) == {1}
    finally:
        engine.dispose()


def test_serve_started_while_a_pass_holds_the_account_takes_it_when_the_pass_ends(
    tmp_path: Path,
    dovecot: DovecotServer,
    processes: list[subprocess.Popen[bytes]],
) -> None:
    account = _account(dovecot)
    dovecot.save_message(account.username, sample("Before the pass " + uuid.uuid4().hex[:6]))
    url, _ = _database(tmp_path)
    config = write_config(tmp_path, url, [account], served=True)
    deployment = load_config(config)
    log = tmp_path / "serve.log"
    with Services.open(deployment) as services:
        (account_config,) = deployment.accounts
        with holding_account(services, account_config):
            services.account_synchronizer().run_once(account_config)
            arrived = "While the pass held it " + uuid.uuid4().hex[:6]
            dovecot.save_message(account.username, sample(arrived))
            serving = _continuous(config, "serve", log)
            processes.append(serving)
            engine = services.engine
            wait_for(
                lambda: _live_workers(engine) > 0 or sum(_stored(engine).values()) > 1,
                "serve is at work",
            )
            time.sleep(4 * LEASE_SECONDS)  # serve's rounds go on beside the pass
            assert sum(_stored(engine).values()) == 1, "serve synchronized beside the pass"
            pass_holder = holders(engine)["a0"]
        wait_for(
            lambda: holders(engine)["a0"] not in (None, pass_holder),
            "serve took the account once the pass gave it up",
        )
        wait_for(lambda: sum(_stored(engine).values()) == 2, "serve stored the mail that arrived")
        assert set(_stored(engine).values()) == {1}, "a message stored twice"
        assert serving.poll() is None
        assert stop(serving) == 0
        assert holders(engine) == {"a0": None}, "a clean stop gives the lease up"
    assert _events(log, "leases.lost", "leases.work_failed") == []


def _live_workers(engine: sa.Engine) -> int:
    with engine.connect() as c:
        return len(c.execute(sa.select(lease_workers.c.worker_id)).all())
