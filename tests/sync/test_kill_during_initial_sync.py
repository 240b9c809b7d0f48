"""Killing `mailfathom sync` with SIGKILL during an initial sync, then starting it again.

A Dovecot account holds 1,500 generated messages in two folders. The command line synchronizer
runs as a child process with a small batch size, so a pass commits many times, and is killed
at random moments (seeded) while it copies the mailbox. After every kill the store is checked
while nothing runs; at the end one uninterrupted run must leave exactly the server's messages,
each once, and a further run must find nothing new.

Kill moments follow the synchronizer's progress, watched by polling the committed row count:
most kills fall at a random moment within a batch once a randomly chosen number of rows is
committed (the targets of one store spread over the whole copy); the rest fall at a random
moment of start-up (imports, migrations, login, envelope fetch), timed from what the watched
runs showed. Each store's very first start is interrupted too.
"""

from __future__ import annotations

import contextlib
import imaplib
import itertools
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

from mailfathom.adapters.content.packs import Location, PackContentStore
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.preparer import POOL_THRESHOLD
from mailfathom.adapters.sql.schema import folders, message_bodies, messages
from mailfathom.domain.content_state import ContentState
from mailfathom.domain.errors import ContentMissingError
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import uid_fetch

# Kill loops: long by design.
pytestmark = [pytest.mark.timeout(600), pytest.mark.soak]

MESSAGE_COUNT = 1500
TEMPLATE_COUNT = 120  # generating is slow; copies of these get distinct Message-IDs
ARCHIVE = "Archive"
FOLDERS = ("INBOX", ARCHIVE)
BATCH_MESSAGES = 25  # at least POOL_THRESHOLD, so batches go through the normalization pool
SEED = 20260301

APPEND_CHUNK = 100
STARTUP_SHARE = 0.25  # share of kills aimed at the start-up phase
FIRST_START_GUESS = 2.0  # seconds; replaced by what the first watched runs show
RUN_TIMEOUT = 240.0  # bound on one sync run
GRACE_SECONDS = 10.0  # for the processes of a finished run to exit
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
        generate_mailbox(TEMPLATE_COUNT, seed=SEED % 1000, min_octets=1_000, max_octets=24_000)
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
            answers = uid_fetch(conn, "1:*", "UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]")
            ids: dict[int, str] = {}
            for uid, items in answers.items():
                if items[b"BODY[HEADER.FIELDS (MESSAGE-ID)]"] is None:
                    continue  # expunged by another session, not yet told to this one: gone
                header = items[b"BODY[HEADER.FIELDS (MESSAGE-ID)]"].decode().split(":", 1)[1]
                ids[uid] = _strip_id(" ".join(header.split()))
            result[name] = ServerFolder(uidvalidity, uid_next, ids)
        return result
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            conn.logout()


def _append_all(conn: imaplib.IMAP4, folder: str, items: list[tuple[str, bytes]]) -> None:
    """Deliver many messages with MULTIAPPEND (RFC 3502) and non-synchronizing literals
    (RFC 7888): one command and one server transaction per chunk instead of per message."""
    typ, data = conn.capability()
    assert typ == "OK", data
    capabilities = data[0].upper().split()
    assert b"LITERAL+" in capabilities
    assert b"MULTIAPPEND" in capabilities
    for start in range(0, len(items), APPEND_CHUNK):
        tag = f"MA{start:05d}".encode()
        command = [tag, b" APPEND ", folder.encode()]
        for flags, raw in items[start : start + APPEND_CHUNK]:
            command.append(f" ({flags}) {{{len(raw)}+}}\r\n".encode())
            command.append(raw)
        command.append(b"\r\n")
        conn.send(b"".join(command))
        while True:  # each readline is bounded by the connection's timeout
            line = conn.readline()
            assert line, "the server closed the connection during APPEND"
            if line.startswith(tag + b" "):
                assert line.startswith(tag + b" OK"), line
                break


@pytest.fixture(scope="module")
def mailbox(dovecot: DovecotServer) -> Mailbox:
    """A new Dovecot user holding MESSAGE_COUNT messages in INBOX and Archive.

    Shared by the tests of this module: synchronizing only reads the server (bodies are
    fetched with BODY.PEEK), so each test starts its stores from the same mailbox."""
    suffix = uuid.uuid4().hex[:12]
    account = dovecot.add_user(f"user-{suffix}", f"pw-{suffix}")
    dovecot.create_folder(account.username, ARCHIVE)
    by_folder: dict[str, list[tuple[str, bytes]]] = {name: [] for name in FOLDERS}
    for folder, flags, raw in _mailbox_messages():
        by_folder[folder].append((flags, raw))
    conn = imaplib.IMAP4(account.host, account.port, timeout=60)
    try:
        conn.login(account.username, account.password)
        for folder, items in by_folder.items():
            _append_all(conn, folder, items)
    finally:
        conn.logout()
    server = read_server(account)
    assert sum(len(f.message_ids) for f in server.values()) == MESSAGE_COUNT
    for state in server.values():
        assert len(set(state.message_ids.values())) == len(state.message_ids)
    assert all(server[name].message_ids for name in FOLDERS)
    return Mailbox(account, server)


# -- a store generation: configuration, data directory, account --------------------------------


@dataclass
class Store:
    """One configuration with its own data directory and account id: a fresh, empty store.

    With PostgreSQL several generations share one database; the account id keeps them apart."""

    directory: Path
    account_id: str
    database_url: str | None  # None: the embedded SQLite file
    secret_env: str
    data_dir: Path = field(init=False)
    config: Path = field(init=False)
    # content files already hashed: key -> (size, mtime_ns) when they matched
    verified: dict[str, Location] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.data_dir = self.directory / "data"
        self.config = self.directory / "mailfathom.toml"

    @property
    def content_dir(self) -> Path:
        return self.data_dir / "content"

    @property
    def sqlite_file(self) -> Path | None:
        return None if self.database_url else self.data_dir / "mailfathom.sqlite3"


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
    store = Store(directory, account_id, database_url, secret_env)
    store.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return store


def inspection_engine(store: Store) -> sa.Engine | None:
    """A plain engine for reading the store; None while an SQLite store has no file yet.

    SQLite is opened read-only, so inspecting never checkpoints the WAL or otherwise changes
    the files a killed run leaves for the next run to recover from."""
    if store.database_url:
        return sa.create_engine(store.database_url)
    assert store.sqlite_file is not None
    if not store.sqlite_file.exists():
        return None
    return sa.create_engine(
        f"sqlite+pysqlite:///file:{store.sqlite_file}?mode=ro&uri=true", module=sqlean.dbapi2
    )


class RowCounter:
    """Counts the rows committed so far, without taking a lock the synchronizer could wait on
    (SQLite: a read-only connection per call; WAL lets it read beside the writer)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._engine = inspection_engine(store) if store.database_url else None

    def __call__(self) -> int:
        if self._engine is None:
            return self._count_sqlite()
        with self._engine.connect() as c:
            if not sa.inspect(c).has_table("messages"):
                return 0
            query = sa.select(sa.func.count()).where(
                messages.c.account_id == self._store.account_id
            )
            return int(c.scalar(query) or 0)

    def _count_sqlite(self) -> int:
        path = self._store.sqlite_file
        if path is None or not path.exists():
            return 0
        conn = sqlean.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            (count,) = conn.execute(
                "SELECT count(*) FROM messages WHERE account_id = ?", (self._store.account_id,)
            ).fetchone()
            return int(count)
        except sqlean.OperationalError:  # the schema is not there yet
            return 0
        finally:
            conn.close()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()


# -- running the command line ------------------------------------------------------------------


def group_members(*pgids: int) -> dict[int, str]:
    """Live processes of the process groups `pgids` (Linux /proc), with their command lines."""
    members: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            state, _ppid, group = stat[stat.rindex(")") + 2 :].split()[:3]
            if int(group) not in pgids or state == "Z":
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        members[int(entry.name)] = command.strip()[:160]
    return members


def wait_for_group_exit(pgid: int, timeout: float) -> dict[int, str]:
    """Processes of the group still alive after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while (members := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    return members


def kill_members(members: dict[int, str]) -> None:
    for pid in members:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class Runner:
    """Starts `mailfathom sync` in a process group of its own, so that whatever processes a
    run starts (the normalization pool) can be found once the run is over."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self._env = env
        self._logs = logs
        self._runs = 0
        self._groups: list[int] = []
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
                start_new_session=True,
            )
        self._groups.append(proc.pid)
        return proc, log

    def close(self) -> None:
        """End anything this runner started that is still running (after a failure)."""
        kill_members(group_members(*self._groups))

    def complete(self, store: Store) -> str:
        """One uninterrupted pass; returns its output."""
        proc, log = self.start(store)
        try:
            code = proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            kill_members(group_members(proc.pid))
            pytest.fail(f"sync did not finish in {RUN_TIMEOUT}s:\n{log.read_text()[-3000:]}")
        output = log.read_text(errors="replace")
        assert code == 0, f"sync exited with {code}:\n{output[-3000:]}"
        assert_no_survivors(proc.pid)
        return output


def assert_no_survivors(pgid: int) -> None:
    """A run that ended by itself must not leave processes behind."""
    survivors = wait_for_group_exit(pgid, GRACE_SECONDS)
    kill_members(survivors)
    assert not survivors, f"processes outlived the sync that started them: {survivors}"


@pytest.fixture(scope="module")
def child_env(mailbox: Mailbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = dict(os.environ)
    env[SECRET_ENV] = mailbox.account.password
    env["COLUMNS"] = "200"
    # Dozens of interpreter starts: let them share compiled bytecode in a private directory.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    return env


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


def _text_readable(store: Store, key: str | None) -> bool:
    """Whether the content store holds an intact text record for the MIME under `key` (where
    a synchronization pass keeps the bodies)."""
    if not key:
        return False
    content = PackContentStore(store.content_dir, durable=False)
    try:
        content.get_text(key)
    except ContentMissingError:
        return False
    finally:
        content.close()
    return True


def _content_matches(store: Store, key: str) -> bool:
    """Whether the content store holds octets that hash to `key`. A key is read again only
    when its location changed since it last matched."""
    content = PackContentStore(store.content_dir, durable=False)
    try:
        location = content.locate(key)
        if location is not None and store.verified.get(key) == location:
            return True
        try:
            content.get(key)
        except ContentMissingError:
            return False
    finally:
        content.close()
    if location is not None:
        store.verified[key] = location
    return True


def leftovers(store: Store) -> str:
    """What interrupted runs left in the content store (reported, not asserted): packs, and
    the octets no index entry points at (a batch written but never committed is indexed and
    counted as held)."""
    packs = list((store.content_dir / "packs").glob("*.pack"))
    content = PackContentStore(store.content_dir, durable=False)
    try:
        held = content.used_octets()
    finally:
        content.close()
    written = sum(p.stat().st_size for p in packs)
    return f"{len(packs)} packs, {written - held} octets in them not indexed or headers"


def inspect_store(store: Store, mailbox: Mailbox) -> Snapshot:
    """Check the invariants an interrupted initial sync must keep, and describe the store."""
    empty = Snapshot({name: [] for name in FOLDERS}, Counter(), {})
    engine = inspection_engine(store)
    if engine is None:
        return empty
    try:
        with engine.connect() as c:
            if not sa.inspect(c).has_table("messages"):
                return empty
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
                    # Plans (and so row order) may change as the table grows; the
                    # comparisons between passes are of the same rows in the same order.
                    .order_by(messages.c.seq)
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
            if row.body_seq is None and not _text_readable(store, row.content_key):
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
class Pace:
    """How fast the synchronizer runs here and now, learned from the runs the test watches."""

    startup: float = FIRST_START_GUESS  # process start until its first commit
    batch: float = 1.0  # seconds between two commits

    def learn(self, startup: float, batch: float | None) -> None:
        self.startup = startup
        if batch is not None:
            self.batch = batch


@dataclass
class Tally:
    landed: int = 0  # SIGKILL reached a running process
    in_startup: int = 0  # ... before that run committed anything
    mid_copy: int = 0  # ... and left the store partly copied
    finished_first: int = 0  # the run completed before its kill was due
    survivors: int = 0  # processes of killed runs still alive after the kill
    stores: int = 0
    rows_at_kill: list[int] = field(default_factory=list)
    seconds_at_kill: list[float] = field(default_factory=list)

    def summary(self, total: int) -> str:
        rows = sorted(self.rows_at_kill)
        secs = sorted(self.seconds_at_kill)
        return (
            f"{self.landed} kills landed while sync ran: {self.in_startup} before the run's "
            f"first commit, {self.mid_copy} leaving the store partly copied (rows at kill "
            f"{rows[0] if rows else '-'}..{rows[-1] if rows else '-'} of {total}; "
            f"{secs[0] if secs else 0:.2f}..{secs[-1] if secs else 0:.2f}s after start); "
            f"{self.finished_first} runs finished before their kill; {self.stores} store(s); "
            f"{self.survivors} processes of killed runs outlived them"
        )


def plan(rng: random.Random, kills: int, total: int) -> list[int | None]:
    """One entry per kill, for a fresh store: None kills at a random moment of start-up
    (imports, migrations, login, envelope fetch, first batch); a number N kills at a random
    moment within a batch, once at least N rows are committed and the run committed
    something itself. The first kill of a store is a start-up kill, so a store's very first
    start (which creates the schema) is interrupted too."""
    kinds = [None] + [None if rng.random() < STARTUP_SHARE else 0 for _ in range(kills - 1)]
    targets = iter(sorted(rng.randrange(total) for k in kinds if k is not None))
    return [None if k is None else next(targets) for k in kinds]


def _kill_after(proc: subprocess.Popen[bytes], delay: float) -> int:
    try:
        return proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        return proc.wait(timeout=30)


def _copy_phase_kill(
    proc: subprocess.Popen[bytes],
    started: float,
    rows: RowCounter,
    before: int,
    target: int,
    rng: random.Random,
    pace: Pace,
) -> int:
    first: tuple[float, int] | None = None
    while proc.poll() is None:
        now = time.monotonic()
        if now - started > RUN_TIMEOUT:
            _kill_after(proc, 0)
            pytest.fail(f"a sync ran for more than {RUN_TIMEOUT}s without finishing")
        count = rows()
        if count > before:
            if first is None:
                first = (now, count)
            if count >= target:
                done = count - first[1]
                batch = (now - first[0]) * BATCH_MESSAGES / done if done >= BATCH_MESSAGES else None
                pace.learn(first[0] - started, batch)
                return _kill_after(proc, rng.uniform(0.0, pace.batch))
        time.sleep(POLL_SECONDS)
    return proc.returncode


def kill_and_restart(
    *,
    kills: int,
    mailbox: Mailbox,
    runner: Runner,
    make_store: Callable[[], Store],
    rng: random.Random,
) -> tuple[Store, Tally]:
    tally = Tally()
    pace = Pace()
    store: Store | None = None
    rounds = 0
    schedule: list[int | None] = []
    while tally.landed < kills:
        rounds += 1
        assert rounds <= 3 * kills, tally.summary(mailbox.total)
        if store is None:
            store = make_store()
            tally.stores += 1
            schedule = plan(rng, kills - tally.landed, mailbox.total)
        target = schedule.pop(0)
        rows = RowCounter(store)
        try:
            before = rows()
            proc, log = runner.start(store)
            started = time.monotonic()
            if target is None:
                code = _kill_after(proc, rng.uniform(0.0, pace.startup))
            else:
                code = _copy_phase_kill(proc, started, rows, before, target, rng, pace)
            elapsed = time.monotonic() - started
        finally:
            rows.close()
        if code == -signal.SIGKILL:
            # Whatever the killed run started has nothing left to report to; it must not
            # linger into the next rounds (see the test about leftover processes below).
            leftover = group_members(proc.pid)
            kill_members(leftover)
            tally.survivors += len(leftover)
        snapshot = inspect_store(store, mailbox)
        if code == -signal.SIGKILL:
            tally.landed += 1
            tally.rows_at_kill.append(snapshot.rows)
            tally.seconds_at_kill.append(elapsed)
            tally.in_startup += snapshot.rows == before
            tally.mid_copy += 0 < snapshot.rows < mailbox.total
            continue
        output = log.read_text(errors="replace")
        assert code == 0, f"round {rounds}: sync exited with {code}:\n{output[-3000:]}"
        assert_no_survivors(proc.pid)
        tally.finished_first += 1
        assert_complete(snapshot, mailbox)
        # Kills on a complete store would only interrupt passes with nothing to do.
        store = None
    assert store is not None
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
    *, kills: int, mailbox: Mailbox, child_env: dict[str, str], root: Path, database_url: str | None
) -> Tally:
    rng = random.Random(SEED)
    runner = Runner(child_env, root / "logs")
    generations = itertools.count(1)

    def make_store() -> Store:
        directory = root / f"store-{next(generations)}"
        return new_store(directory, mailbox.account, SECRET_ENV, database_url)

    try:
        store, tally = kill_and_restart(
            kills=kills, mailbox=mailbox, runner=runner, make_store=make_store, rng=rng
        )
        finish_and_resync(store, mailbox, runner)
    finally:
        runner.close()
    print(f"\n{tally.summary(mailbox.total)}; {leftovers(store)}")
    return tally


def test_sigkill_at_random_points_of_an_initial_sync_leaves_every_message_once_in_sqlite(
    mailbox: Mailbox, child_env: dict[str, str], tmp_path: Path
) -> None:
    tally = run_scenario(
        kills=20, mailbox=mailbox, child_env=child_env, root=tmp_path, database_url=None
    )
    assert tally.landed >= 20
    assert tally.mid_copy >= 10, tally.summary(mailbox.total)


def test_sigkill_at_random_points_of_an_initial_sync_leaves_every_message_once_in_postgres(
    mailbox: Mailbox, child_env: dict[str, str], tmp_path: Path, migrated_postgres_url: str
) -> None:
    tally = run_scenario(
        kills=5,
        mailbox=mailbox,
        child_env=child_env,
        root=tmp_path,
        database_url=migrated_postgres_url,
    )
    assert tally.landed >= 5
    assert tally.mid_copy >= 2, tally.summary(mailbox.total)


def test_sigkill_of_sync_leaves_no_worker_processes_running(
    mailbox: Mailbox, child_env: dict[str, str], tmp_path: Path
) -> None:
    assert BATCH_MESSAGES >= POOL_THRESHOLD
    store = new_store(tmp_path / "store", mailbox.account, SECRET_ENV, None)
    runner = Runner(child_env, tmp_path / "logs")
    rows = RowCounter(store)
    proc, log = runner.start(store)
    try:
        # Once a batch of BATCH_MESSAGES (at least the pool threshold) is committed, the
        # normalization pool has been started.
        deadline = time.monotonic() + RUN_TIMEOUT
        while proc.poll() is None and rows() < 2 * BATCH_MESSAGES:
            assert time.monotonic() < deadline, "no batch was committed"
            time.sleep(POLL_SECONDS)
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        survivors = wait_for_group_exit(proc.pid, GRACE_SECONDS)
    finally:
        rows.close()
        runner.close()
    assert not survivors, f"processes outlived the killed sync: {survivors}"
