"""Killing `mailfathom sync` with SIGKILL during an initial sync, then starting it again.

A Dovecot account holds a couple of thousand generated messages in two folders. The command
line synchronizer runs as a child process with a small batch size, so a pass commits many
times, and is killed at random moments (seeded) while it copies the mailbox. After every kill
the store is inspected while nothing runs; at the end one uninterrupted run must leave exactly
the server's messages, each once, and a further run must find nothing new.

Kill moments are drawn from a timed, uninterrupted run of the same mailbox: most fall at a
random point of the copying phase, scaled so the kills of one test spread over the whole copy;
the rest fall inside the start-up phase (imports, migrations, login, envelope fetch).
"""

from __future__ import annotations

import contextlib
import hashlib
import imaplib
import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
import sqlean

from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.sql.schema import folders, message_bodies, messages
from mailfathom.app.sync_types import ContentState
from servers.dovecot import DovecotServer, ImapAccount

pytestmark = pytest.mark.timeout(600)

MESSAGE_COUNT = 2000
TEMPLATE_COUNT = 120  # generating is slow; copies of these get distinct Message-IDs
ARCHIVE = "Archive"
FOLDERS = ("INBOX", ARCHIVE)
BATCH_MESSAGES = 25
SEED = 20260301

STARTUP_SHARE = 0.25  # share of kills aimed at the start-up phase
RUN_TIMEOUT = 240.0  # bound on one uninterrupted sync
POLL_SECONDS = 0.05
SECRET_ENV = "MF_KILL_TEST_IMAP_SECRET"

HELD_BACK = {ContentState.EXCEEDED_SIZE_LIMIT.value, ContentState.AWAITING_HEADROOM.value}


# -- the mailbox on the server -----------------------------------------------------------------


@dataclass(frozen=True)
class ServerFolder:
    uidvalidity: int
    uid_next: int
    message_ids: dict[int, str]  # uid -> Message-ID without angle brackets


@dataclass(frozen=True)
class Mailbox:
    account: ImapAccount
    folders: dict[str, ServerFolder]

    @property
    def total(self) -> int:
        return sum(len(f.message_ids) for f in self.folders.values())


def _mailbox_messages() -> Iterator[tuple[str, str, bytes]]:
    """(folder, flags, raw) for MESSAGE_COUNT distinct messages of varied size and shape."""
    templates = list(
        generate_mailbox(TEMPLATE_COUNT, seed=SEED % 1000, min_octets=1_000, max_octets=40_000)
    )
    for index in range(MESSAGE_COUNT):
        template = templates[index % TEMPLATE_COUNT]
        copy = index // TEMPLATE_COUNT
        # Every Message-ID (and the In-Reply-To/References naming them) ends in this domain;
        # rewriting it per copy keeps the reply chains of each copy consistent.
        raw = template.raw.replace(b"@mail.example.org>", f".c{copy}@mail.example.org>".encode())
        folder = ARCHIVE if template.folder == ARCHIVE else "INBOX"
        flags = " ".join(
            name
            for letter, name in (("S", "\\Seen"), ("F", "\\Flagged"))
            if letter in template.flags
        )
        yield folder, flags, raw


def _strip_id(value: str) -> str:
    return value.strip().strip("<>")


def read_server(account: ImapAccount) -> dict[str, ServerFolder]:
    conn = imaplib.IMAP4(account.host, account.port, timeout=30)
    try:
        conn.login(account.username, account.password)
        result: dict[str, ServerFolder] = {}
        for name in FOLDERS:
            typ, _ = conn.select(name, readonly=True)
            assert typ == "OK", name
            typ, status = conn.status(name, "(UIDVALIDITY UIDNEXT)")
            assert typ == "OK", status
            text = status[0].decode()
            uidvalidity = int(re.search(r"UIDVALIDITY (\d+)", text).group(1))  # type: ignore[union-attr]
            uid_next = int(re.search(r"UIDNEXT (\d+)", text).group(1))  # type: ignore[union-attr]
            typ, data = conn.uid("FETCH", "1:*", "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            assert typ == "OK", data
            ids: dict[int, str] = {}
            for item in data:
                if not isinstance(item, tuple):
                    continue
                uid = int(re.search(rb"UID (\d+)", item[0]).group(1))  # type: ignore[union-attr]
                header = item[1].decode().split(":", 1)[1]
                ids[uid] = _strip_id(" ".join(header.split()))
            result[name] = ServerFolder(uidvalidity, uid_next, ids)
        return result
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            conn.logout()


@pytest.fixture(scope="module")
def mailbox(dovecot: DovecotServer) -> Mailbox:
    """A new Dovecot user holding MESSAGE_COUNT messages in INBOX and Archive.

    Shared by the tests of this module: synchronizing only reads the server (bodies are
    fetched with BODY.PEEK), so each test starts its stores from the same mailbox."""
    suffix = uuid.uuid4().hex[:12]
    account = dovecot.add_user(f"user-{suffix}", f"pw-{suffix}")
    dovecot.create_folder(account.username, ARCHIVE)
    conn = imaplib.IMAP4(account.host, account.port, timeout=30)
    try:
        conn.login(account.username, account.password)
        for folder, flags, raw in _mailbox_messages():
            typ, data = conn.append(folder, f"({flags})" if flags else None, None, raw)
            assert typ == "OK", data
    finally:
        conn.logout()
    server = read_server(account)
    assert sum(len(f.message_ids) for f in server.values()) == MESSAGE_COUNT
    for folder in server.values():
        assert len(set(folder.message_ids.values())) == len(folder.message_ids)
    assert all(server[name].message_ids for name in FOLDERS)
    return Mailbox(account, server)


# -- a store generation: configuration, data directory, account --------------------------------


@dataclass
class Store:
    """One configuration with its own data directory and account id: a fresh, empty store.

    With PostgreSQL several generations share one database; the account id keeps them apart."""

    directory: Path
    account_id: str
    url: str
    secret_env: str
    data_dir: Path = field(init=False)
    config: Path = field(init=False)

    def __post_init__(self) -> None:
        self.data_dir = self.directory / "data"
        self.config = self.directory / "mailfathom.toml"

    @property
    def content_dir(self) -> Path:
        return self.data_dir / "content"


def new_store(
    directory: Path, account: ImapAccount, secret_env: str, database_url: str | None
) -> Store:
    directory.mkdir(parents=True)
    account_id = f"kill-{uuid.uuid4().hex[:8]}"
    lines = ["[Store]", 'DataDir = "data"']
    if database_url:
        lines.append(f'DatabaseUrl = "{database_url}"')
    lines += [
        "",
        "[Sync]",
        f"BatchMessages = {BATCH_MESSAGES}",
        "",
        "[[Accounts]]",
        f'Id = "{account_id}"',
        'Kind = "imap"',
        "",
        "[Accounts.Imap]",
        f'Host = "{account.host}"',
        f"Port = {account.port}",
        f'Username = "{account.username}"',
        'Tls = "none"',
        f'Secret = {{ Env = "{secret_env}" }}',
        "TimeoutSeconds = 30",
    ]
    for name in FOLDERS:
        lines += ["", "[[Accounts.Folders]]", f'Remote = "{name}"']
    url = database_url or f"sqlite:///{directory / 'data' / 'mailfathom.sqlite3'}"
    store = Store(directory, account_id, url, secret_env)
    store.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return store


def inspection_engine(url: str) -> sa.Engine:
    """A plain engine for reading the store while no synchronizer runs."""
    if url.startswith("sqlite"):
        return sa.create_engine(url.replace("sqlite:", "sqlite+pysqlite:", 1), module=sqlean.dbapi2)
    return sa.create_engine(url)


def stored_count(store: Store) -> int:
    """Rows committed so far, read without taking any lock the synchronizer could wait on."""
    if store.url.startswith("sqlite"):
        path = store.data_dir / "mailfathom.sqlite3"
        if not path.exists():
            return 0
        conn = sqlean.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            (count,) = conn.execute(
                "SELECT count(*) FROM messages WHERE account_id = ?", (store.account_id,)
            ).fetchone()
            return int(count)
        except sqlean.OperationalError:  # no schema yet
            return 0
        finally:
            conn.close()
    engine = inspection_engine(store.url)
    try:
        with engine.connect() as c:
            if not sa.inspect(c).has_table("messages"):
                return 0
            return int(
                c.scalar(
                    sa.select(sa.func.count()).where(messages.c.account_id == store.account_id)
                )
                or 0
            )
    finally:
        engine.dispose()


# -- running the command line ------------------------------------------------------------------


class Runner:
    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self._env = env
        self._logs = logs
        self._runs = 0
        logs.mkdir(parents=True, exist_ok=True)

    def start(self, store: Store) -> tuple[subprocess.Popen[bytes], Path]:
        self._runs += 1
        log = self._logs / f"run-{self._runs:03d}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mailfathom", "sync", "--config", str(store.config)],
                env=self._env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=store.directory,
            )
        return proc, log

    def complete(self, store: Store) -> str:
        """One uninterrupted pass; returns its output."""
        proc, log = self.start(store)
        try:
            code = proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            pytest.fail(f"sync did not finish in {RUN_TIMEOUT}s:\n{log.read_text()[-3000:]}")
        output = log.read_text(errors="replace")
        assert code == 0, f"sync exited with {code}:\n{output[-3000:]}"
        return output


@pytest.fixture(scope="module")
def child_env(mailbox: Mailbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = dict(os.environ)
    env[SECRET_ENV] = mailbox.account.password
    env["COLUMNS"] = "200"
    # Dozens of interpreter starts: let them share compiled bytecode in a private directory.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    return env


@dataclass(frozen=True)
class Timing:
    startup: float  # start of the process until the first batch is committed
    copying: float  # first batch committed until the process exits


@pytest.fixture(scope="module")
def timing(
    mailbox: Mailbox, child_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Timing:
    """An uninterrupted initial sync into a separate SQLite store, timed by watching rows."""
    root = tmp_path_factory.mktemp("timed-run")
    store = new_store(root / "store", mailbox.account, SECRET_ENV, None)
    runner = Runner(child_env, root / "logs")
    started = time.monotonic()
    proc, log = runner.start(store)
    first_row: float | None = None
    deadline = started + RUN_TIMEOUT
    while proc.poll() is None:
        if time.monotonic() > deadline:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            pytest.fail(f"the timed sync did not finish in {RUN_TIMEOUT}s")
        if first_row is None and stored_count(store) > 0:
            first_row = time.monotonic()
        time.sleep(POLL_SECONDS)
    finished = time.monotonic()
    assert proc.returncode == 0, log.read_text(errors="replace")[-3000:]
    assert first_row is not None, "the whole mailbox was committed between two polls"
    snapshot = inspect_store(store, mailbox)
    assert_complete(snapshot, mailbox)
    return Timing(startup=first_row - started, copying=finished - first_row)


# -- what must hold whenever the synchronizer is not running ------------------------------------


@dataclass(frozen=True)
class FolderRow:
    folder_id: int
    uidvalidity: int | None
    highest_modseq: int | None
    uid_next: int | None
    last_committed_at: datetime | None


@dataclass(frozen=True)
class Snapshot:
    uids: dict[str, list[int]]  # folder -> stored UIDs, one entry per row
    states: Counter[str]
    folders: dict[str, FolderRow]

    @property
    def rows(self) -> int:
        return sum(len(u) for u in self.uids.values())


def _content_matches(store: Store, key: str) -> bool:
    path = store.content_dir / key[:2] / key[2:4] / key
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() == key
    except OSError:
        return False


def inspect_store(store: Store, mailbox: Mailbox) -> Snapshot:
    """Check the invariants an interrupted initial sync must keep, and describe the store."""
    engine = inspection_engine(store.url)
    try:
        with engine.connect() as c:
            if not sa.inspect(c).has_table("messages"):
                return Snapshot({name: [] for name in FOLDERS}, Counter(), {})
            folder_rows = {
                r.remote_name: FolderRow(
                    r.folder_id, r.uidvalidity, r.highest_modseq, r.uid_next, r.last_committed_at
                )
                for r in c.execute(
                    sa.select(folders).where(folders.c.account_id == store.account_id)
                )
            }
            rows = list(
                c.execute(
                    sa.select(
                        folders.c.remote_name,
                        messages.c.uidvalidity,
                        messages.c.uid,
                        messages.c.message_id_header,
                        messages.c.content_state,
                        messages.c.content_key,
                        message_bodies.c.seq.label("body_seq"),
                    )
                    .join(folders, folders.c.folder_id == messages.c.folder_id)
                    .outerjoin(message_bodies, message_bodies.c.seq == messages.c.seq)
                    .where(messages.c.account_id == store.account_id)
                )
            )
    finally:
        engine.dispose()

    uids: dict[str, list[int]] = {name: [] for name in FOLDERS}
    ids: Counter[tuple[str, str]] = Counter()
    states: Counter[str] = Counter()
    problems: list[str] = []
    for row in rows:
        server = mailbox.folders.get(row.remote_name)
        if server is None:
            problems.append(f"row in unexpected folder {row.remote_name!r}")
            continue
        uids[row.remote_name].append(row.uid)
        states[row.content_state] += 1
        if row.uidvalidity != server.uidvalidity or row.uid not in server.message_ids:
            problems.append(f"{row.remote_name}/{row.uidvalidity}/{row.uid} is not on the server")
        elif _strip_id(row.message_id_header or "") != server.message_ids[row.uid]:
            problems.append(f"{row.remote_name}/{row.uid} has another message's Message-ID")
        ids[(row.remote_name, _strip_id(row.message_id_header or ""))] += 1
        if row.content_state == ContentState.STORED.value:
            if not row.content_key or not _content_matches(store, row.content_key):
                problems.append(f"{row.remote_name}/{row.uid}: content missing or damaged")
            if row.body_seq is None:
                problems.append(f"{row.remote_name}/{row.uid}: committed without its body text")
        elif row.content_state not in HELD_BACK or row.content_key is not None:
            problems.append(f"{row.remote_name}/{row.uid}: state {row.content_state!r}")

    for name, stored in uids.items():
        twice = sorted(uid for uid, n in Counter(stored).items() if n > 1)
        if twice:
            problems.append(f"{name}: UIDs stored more than once: {twice[:10]}")
    for name, server in mailbox.folders.items():
        on_server = Counter(server.message_ids.values())
        over = sorted(mid for (f, mid), n in ids.items() if f == name and n > on_server[mid])
        if over:
            problems.append(f"{name}: Message-IDs stored more often than on the server: {over[:5]}")
        record = folder_rows.get(name)
        # Progress is recorded only after everything it covers was applied.
        if record and record.uid_next is not None and set(uids[name]) != set(server.message_ids):
            problems.append(f"{name}: progress recorded before the folder was fully copied")
    assert not problems, "\n".join(problems[:20])
    return Snapshot(uids, states, folder_rows)


def assert_complete(snapshot: Snapshot, mailbox: Mailbox) -> None:
    for name, server in mailbox.folders.items():
        stored = snapshot.uids[name]
        assert len(stored) == len(server.message_ids), name
        assert sorted(stored) == sorted(server.message_ids), name
        record = snapshot.folders[name]
        assert record.uidvalidity == server.uidvalidity
        assert record.uid_next == server.uid_next
        assert record.last_committed_at is not None
    assert snapshot.states == Counter({ContentState.STORED.value: mailbox.total})


# -- the scenario ------------------------------------------------------------------------------


@dataclass
class Tally:
    landed: int = 0  # killed while the process was still running
    mid_copy: int = 0  # ... and left the store partly copied
    advanced: int = 0  # ... after committing at least one more batch in that run
    finished_first: int = 0  # the run completed before its kill was due
    fresh_stores: int = 1
    delays: list[float] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.landed} kills landed while sync ran ({self.mid_copy} left the store partly "
            f"copied, {self.advanced} after new commits in that run); {self.finished_first} "
            f"runs finished before their kill; {self.fresh_stores} store(s) used; delays "
            f"{min(self.delays, default=0):.2f}-{max(self.delays, default=0):.2f}s"
        )


def kill_and_restart(
    *,
    kills: int,
    mailbox: Mailbox,
    timing: Timing,
    runner: Runner,
    make_store: Callable[[], Store],
    rng: random.Random,
) -> tuple[Store, Tally]:
    tally = Tally()
    store = make_store()
    # Each kill in the copying phase lets the run advance by about 1/kills of the mailbox on
    # average, so the kill points of one store spread from the first batch to the last.
    copy_window = 2.0 * timing.copying / kills
    rounds = 0
    while tally.landed < kills:
        rounds += 1
        assert rounds <= 4 * kills, tally.summary()
        before = stored_count(store)
        if rng.random() < STARTUP_SHARE:
            delay = rng.uniform(0.0, timing.startup)
        else:
            delay = timing.startup + rng.uniform(0.0, copy_window)
        tally.delays.append(delay)
        proc, log = runner.start(store)
        try:
            code = proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            code = proc.wait(timeout=30)
        snapshot = inspect_store(store, mailbox)
        if code == -signal.SIGKILL:
            tally.landed += 1
            if 0 < snapshot.rows < mailbox.total:
                tally.mid_copy += 1
            if snapshot.rows > before:
                tally.advanced += 1
            continue
        assert code == 0, f"round {rounds}: sync exited with {code}:\n{log.read_text()[-3000:]}"
        tally.finished_first += 1
        assert_complete(snapshot, mailbox)
        # Further rounds on a complete store could only kill no-op passes: start again empty.
        store = make_store()
        tally.fresh_stores += 1
    return store, tally


def finish_and_resync(store: Store, mailbox: Mailbox, runner: Runner) -> None:
    runner.complete(store)
    complete = inspect_store(store, mailbox)
    assert_complete(complete, mailbox)

    output = runner.complete(store)
    again = inspect_store(store, mailbox)
    assert again.uids == complete.uids
    reported = dict(re.findall(rf"{re.escape(store.account_id)}/(\S+): (\d+) new", output))
    assert reported == dict.fromkeys(FOLDERS, "0"), output
    for name in FOLDERS:
        before = complete.folders[name].last_committed_at
        after = again.folders[name].last_committed_at
        assert before is not None
        assert after is not None
        assert after > before


def run_scenario(
    *,
    kills: int,
    mailbox: Mailbox,
    timing: Timing,
    child_env: dict[str, str],
    root: Path,
    database_url: str | None,
) -> Tally:
    rng = random.Random(SEED)
    runner = Runner(child_env, root / "logs")
    generations = iter(range(1, 1000))

    def make_store() -> Store:
        return new_store(
            root / f"store-{next(generations)}", mailbox.account, SECRET_ENV, database_url
        )

    store, tally = kill_and_restart(
        kills=kills,
        mailbox=mailbox,
        timing=timing,
        runner=runner,
        make_store=make_store,
        rng=rng,
    )
    finish_and_resync(store, mailbox, runner)
    print(f"\n{timing} {tally.summary()}")
    return tally


def test_sigkill_at_random_points_of_an_initial_sync_leaves_every_message_once_in_sqlite(
    mailbox: Mailbox, timing: Timing, child_env: dict[str, str], tmp_path: Path
) -> None:
    tally = run_scenario(
        kills=20,
        mailbox=mailbox,
        timing=timing,
        child_env=child_env,
        root=tmp_path,
        database_url=None,
    )
    assert tally.landed >= 20
    assert tally.mid_copy >= 10, tally.summary()


def test_sigkill_at_random_points_of_an_initial_sync_leaves_every_message_once_in_postgres(
    mailbox: Mailbox,
    timing: Timing,
    child_env: dict[str, str],
    tmp_path: Path,
    postgres_url: str,
) -> None:
    tally = run_scenario(
        kills=5,
        mailbox=mailbox,
        timing=timing,
        child_env=child_env,
        root=tmp_path,
        database_url=postgres_url,
    )
    assert tally.landed >= 5
    assert tally.mid_copy >= 2, tally.summary()
