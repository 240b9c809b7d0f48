"""Convergence under faults: the synchronization process is killed with SIGKILL while it carries
flag changes and moves to a Dovecot that offers no MOVE (so a move is UID COPY, STORE \\Deleted
and UID EXPUNGE of exactly the moved UIDs), at random moments, at least twenty times.

A durable record is only worth its name if a process dying at any instruction leaves the
mailbox and the store in a state the next run finishes from. Each round records, in-process
through the real use cases (which open no connection), flag changes and moves of randomly
chosen messages, starts `mailfathom sync` as a process of its own and kills it: at a random
moment of its start-up, or a random delay after the store shows a randomly chosen number of
flag records converging or a move's progress noted (the delays spread over twice what a watched
run took for one flag record, or for the moves). What the store and the server hold right after
the kill says where it landed; those counts are printed, and the rounds go on (up to a cap)
until twenty kills landed and both windows the requirement names, between recording and STORE
(a converging record among them) and between COPY and EXPUNGE, were hit often enough.

After each kill the one-shot sync runs again to completion, and an independent IMAP client
(read-only, BODY.PEEK) checks: every record of the round ended completed or dead-lettered;
every Message-ID is on the server exactly once (nothing lost, nothing copied twice); messages
no record names kept their folder and flags, bystanders marked \\Deleted by another client
included; a completed move is in its destination and a completed flag change on the server;
and the store holds one row per message, under the identifier it had before any move, naming
the server's folder, UID and flags.

The seed is printed; MAILFATHOM_KILLED_CONVERGENCE_SEED replays a run.
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlean

from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
from mailfathom.app.organize.organize_email import OrganizeRequest
from mailfathom.bootstrap import Services, load_deployment
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.mutations import MutationState
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import sample, uid_fetch
from sync.test_kill_during_initial_sync import group_members, kill_members, wait_for_group_exit
from waiting import wait_for

# Kill loops: long by design.
pytestmark = [pytest.mark.timeout(600), pytest.mark.soak]

SEED_ENV = "MAILFATHOM_KILLED_CONVERGENCE_SEED"
SECRET_ENV = "MF_KILLED_CONVERGENCE_SECRET"
ACCOUNT_ID = "killed"
INBOX, ARCHIVE, PROJECTS = "INBOX", "Archive", "Projects"
FOLDERS = (INBOX, ARCHIVE, PROJECTS)
START = {INBOX: 24, ARCHIVE: 10, PROJECTS: 6}  # the messages requests may name
KEYWORD_POOL = ("kwalpha", "kwbeta", "kwgamma", "kwdelta")
BYSTANDER_KEYWORD = "bystandermark"
# Messages no request names: (folder, flags as appended by another client).
BYSTANDERS = (
    (INBOX, "\\Deleted"),
    (INBOX, "\\Deleted \\Seen"),
    (INBOX, f"\\Seen \\Flagged {BYSTANDER_KEYWORD}"),
    (INBOX, ""),
    (ARCHIVE, "\\Deleted"),
    (ARCHIVE, BYSTANDER_KEYWORD),
    (PROJECTS, "\\Deleted \\Flagged"),
)
FLAG_CALLS = 8  # set_mail_flags calls per round, one message each
MOVES_PER_ACTION = 3  # messages per organize call; three calls per round

MIN_ROUNDS = 20
MAX_ROUNDS = 60
MIN_PER_WINDOW = 4
MIN_BEGUN = 2  # kills between a flag record's begin and its STORE, inside the first window
SPREAD = 2.0  # a kill's delay is drawn from 0 to this many times the phase's watched length

RUN_TIMEOUT = 60.0
POLL = 0.0005
AGENT = Caller(permissions=ALL_PERMISSIONS, label="agent")

# Where a kill landed, as the store and the server show right after it.
UNTOUCHED = "before any record was touched"
BEFORE_STORE = "between recording and STORE"
BEGUN = "  (of which: the record already converging)"
AFTER_STORE = "after STORE, before the flag record ended"
BEFORE_COPY = "move recorded, before COPY"
COPY_TO_EXPUNGE = "between COPY and EXPUNGE"
MARKED_DELETED = "  (of which: original already marked \\Deleted)"
AFTER_EXPUNGE = "after EXPUNGE, before the move record ended"
CARRIED = "after every record ended"
FINISHED = "run finished before its kill (not counted)"
CLASSES = (
    UNTOUCHED,
    BEFORE_STORE,
    BEGUN,
    AFTER_STORE,
    BEFORE_COPY,
    COPY_TO_EXPUNGE,
    MARKED_DELETED,
    AFTER_EXPUNGE,
    CARRIED,
    FINISHED,
)

ENDED = {MutationState.COMPLETED.value, MutationState.DEAD_LETTERED.value}


# -- the mailbox as an independent client sees it ----------------------------------------------


@dataclass(frozen=True)
class Place:
    """One message on the server: its folder, UID and flags (case-folded, \\Recent left out)."""

    folder: str
    uid: int
    flags: frozenset[str]

    @property
    def seen(self) -> bool:
        return "\\seen" in self.flags

    @property
    def flagged(self) -> bool:
        return "\\flagged" in self.flags

    @property
    def keywords(self) -> frozenset[str]:
        return frozenset(f for f in self.flags if not f.startswith("\\"))

    @property
    def system(self) -> frozenset[str]:
        """The system flags no request of this test asks for (\\Deleted among them)."""
        return frozenset(
            f for f in self.flags if f.startswith("\\") and f not in {"\\seen", "\\flagged"}
        )

    def attribute(self, name: str) -> object:
        values: dict[str, object] = {
            "folder": self.folder,
            "seen": self.seen,
            "flagged": self.flagged,
            "keywords": self.keywords,
            "system": self.system,
        }
        return values[name]


ATTRIBUTES = ("folder", "seen", "flagged", "keywords", "system")
Snapshot = dict[str, list[Place]]  # Message-ID (no angle brackets) -> where it is


class Oracle:
    """A second IMAP client that only looks: folders opened read-only, bodies never fetched."""

    def __init__(self, account: ImapAccount) -> None:
        self._conn = imaplib.IMAP4(account.host, account.port, timeout=30)
        self._conn.login(account.username, account.password)

    def snapshot(self) -> Snapshot:
        found: Snapshot = {}
        for folder in FOLDERS:
            typ, data = self._conn.select(folder, readonly=True)
            assert typ == "OK", data
            answers = uid_fetch(
                self._conn, "1:*", "UID FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]"
            )
            for uid, items in answers.items():
                if items[b"BODY[HEADER.FIELDS (MESSAGE-ID)]"] is None:
                    continue  # expunged by another session, not yet told to this one: gone
                words = frozenset(f.decode().casefold() for f in items[b"FLAGS"]) - {"\\recent"}
                header = items[b"BODY[HEADER.FIELDS (MESSAGE-ID)]"].decode()
                message_id = header.split(":", 1)[1].strip().strip("<>")
                found.setdefault(message_id, []).append(Place(folder, uid, words))
        return found

    def settled(self) -> Snapshot:
        """The server's state once two readings in a row agree: a command the killed process
        sent just before it died may still be running on the server."""
        previous: list[Snapshot] = [self.snapshot()]

        def agrees() -> Snapshot | None:
            current = self.snapshot()
            if current == previous[0]:
                return current
            previous[0] = current
            return None

        return wait_for(agrees, "two readings of the mailbox agreeing", timeout=10)

    def close(self) -> None:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            self._conn.logout()


def fill(account: ImapAccount) -> tuple[list[str], list[str]]:
    """Create the folders and append the messages; (Message-IDs requests may name,
    Message-IDs of bystanders)."""
    conn = imaplib.IMAP4(account.host, account.port, timeout=30)
    try:
        conn.login(account.username, account.password)
        for folder in (ARCHIVE, PROJECTS):
            typ, data = conn.create(folder)
            assert typ == "OK", data
        named: list[str] = []
        bystanders: list[str] = []
        n = 0
        for folder, count in START.items():
            for _ in range(count):
                n += 1
                named.append(_append(conn, folder, "", f"Killed convergence item {n:02d}"))
        for index, (folder, flags) in enumerate(BYSTANDERS):
            subject = f"Killed convergence bystander {index}"
            bystanders.append(_append(conn, folder, flags, subject))
        return named, bystanders
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            conn.logout()


def _append(conn: imaplib.IMAP4, folder: str, flags: str, subject: str) -> str:
    message_id = f"{uuid.uuid4().hex}@killed.example.org"
    raw = sample(subject, message_id=f"<{message_id}>")
    typ, data = conn.append(folder, f"({flags})" if flags else None, None, raw)
    assert typ == "OK", data
    return message_id


# -- the store as it stands, read beside the running process -----------------------------------


@dataclass(frozen=True)
class Record:
    seq: int
    record_id: str
    kind: str
    state: str
    attempts: int
    error_code: int | None
    noted: bool  # a move's progress was noted before its command


@dataclass(frozen=True)
class StoredRow:
    stored_email_id: str
    folder: str
    uid: int
    message_id: str
    seen: bool
    flagged: bool
    keywords: frozenset[str]


class StoreView:
    """Reads the SQLite file read-only, outside any transaction, so it takes no lock the
    process it watches could wait on and never checkpoints what a killed run left behind."""

    def __init__(self, path: Path) -> None:
        self._conn = sqlean.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        self._conn.isolation_level = None

    def last_seq(self) -> int:
        return int(
            self._conn.execute("SELECT coalesce(max(seq), 0) FROM mutation_records").fetchone()[0]
        )

    def records(self, after_seq: int) -> list[Record]:
        rows = self._conn.execute(
            "SELECT seq, record_id, kind, state, attempts, last_error_code, destination_uid_next"
            " FROM mutation_records WHERE seq > ? ORDER BY seq",
            (after_seq,),
        ).fetchall()
        return [
            Record(int(r[0]), _hex(r[1]), r[2], r[3], int(r[4]), r[5], r[6] is not None)
            for r in rows
        ]

    def rows(self) -> list[StoredRow]:
        keywords: dict[int, set[str]] = {}
        for seq, keyword in self._conn.execute("SELECT seq, keyword FROM keywords"):
            keywords.setdefault(int(seq), set()).add(str(keyword).casefold())
        query = (
            "SELECT m.seq, m.stored_email_id, f.remote_name, m.uid, m.message_id_header,"
            " m.seen, m.flagged FROM messages m JOIN folders f ON f.folder_id = m.folder_id"
            " WHERE m.account_id = ? ORDER BY m.seq"
        )
        return [
            StoredRow(
                _hex(r[1]),
                r[2],
                int(r[3]),
                str(r[4] or "").strip().strip("<>"),
                bool(r[5]),
                bool(r[6]),
                frozenset(keywords.get(int(r[0]), ())),
            )
            for r in self._conn.execute(query, (ACCOUNT_ID,))
        ]

    def close(self) -> None:
        self._conn.close()


def _hex(value: object) -> str:
    """A stored UUID as 32 hex digits, however the column hands it back."""
    return uuid.UUID(str(value)).hex


# -- running `mailfathom sync` -----------------------------------------------------------------


class Runner:
    """Starts the one-shot sync in a session of its own, so SIGKILL is real and whatever it
    started can be found and ended by its process group."""

    def __init__(self, config: Path, env: dict[str, str], logs: Path) -> None:
        self._config = config
        self._env = env
        self._logs = logs
        self._runs = 0
        self._groups: list[int] = []
        logs.mkdir(parents=True, exist_ok=True)

    def start(self) -> tuple[subprocess.Popen[bytes], Path]:
        self._runs += 1
        log = self._logs / f"run-{self._runs:03d}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "mailfathom", "sync", "--config", str(self._config)],
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self._config.parent,
                start_new_session=True,
            )
        self._groups.append(proc.pid)
        return proc, log

    def complete(self) -> None:
        proc, log = self.start()
        try:
            code = proc.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill(proc)
            pytest.fail(f"sync did not finish in {RUN_TIMEOUT:g}s:\n{_tail(log)}")
        assert code == 0, f"sync exited with {code}:\n{_tail(log)}"
        survivors = wait_for_group_exit(proc.pid, 10.0)
        kill_members(survivors)
        assert not survivors, f"processes outlived the sync that started them: {survivors}"

    def kill(self, proc: subprocess.Popen[bytes]) -> int:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        code = proc.wait(timeout=30)
        kill_members(group_members(proc.pid))
        return code

    def close(self) -> None:
        kill_members(group_members(*self._groups))


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def _config(root: Path, account: ImapAccount) -> Path:
    folders = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\n'
        + (f'Role = "{role}"\n' if role else "")
        for name, role in ((INBOX, "Inbox"), (ARCHIVE, "Archive"), (PROJECTS, None))
    )
    path = root / "mailfathom.toml"
    path.write_text(
        f'[Store]\nDataDir = "{root / "data"}"\n\n'
        f'[[Accounts]]\nId = "{ACCOUNT_ID}"\nKind = "imap"\n\n'
        f'[Accounts.Imap]\nHost = "{account.host}"\nPort = {account.port}\n'
        f'Username = "{account.username}"\nTls = "none"\nSecret = {{ Env = "{SECRET_ENV}" }}\n'
        f"TimeoutSeconds = 30\n{folders}",
        "utf-8",
    )
    return path


# -- one round's requests ----------------------------------------------------------------------


@dataclass(frozen=True)
class Asked:
    """What one record asks of one message: an attribute's value before and after."""

    record_id: str
    message_id: str
    attribute: str
    before: object
    after: object


def _flag_request(
    rng: random.Random, stored_id: str, place: Place
) -> tuple[FlagChangeRequest, list[tuple[str, object, object]]]:
    """A set_mail_flags call that changes something on every attribute it names, with the
    attributes in the order its records are written (seen, flagged, keywords)."""
    while True:
        seen = (not place.seen) if rng.random() < 0.5 else None
        flagged = (not place.flagged) if rng.random() < 0.5 else None
        change: str | None = None
        named: list[str] = []
        after = place.keywords
        if rng.random() < 0.6:
            held = sorted(place.keywords & set(KEYWORD_POOL))
            free = sorted(set(KEYWORD_POOL) - place.keywords)
            change = rng.choice(["add", "remove", "replace"])
            if change == "remove" and not held:
                change = "add"
            if change == "add" and not free:
                change = "remove"
            if change == "add":
                named = rng.sample(free, rng.randint(1, len(free)))
                after = place.keywords | set(named)
            elif change == "remove":
                named = rng.sample(held, rng.randint(1, len(held)))
                after = place.keywords - set(named)
            else:
                named = rng.sample(KEYWORD_POOL, rng.randint(0, 2))
                while set(named) == place.keywords:
                    named = rng.sample(KEYWORD_POOL, rng.randint(0, 2))
                after = frozenset(named)
        if seen is not None or flagged is not None or change is not None:
            break
    request = FlagChangeRequest(
        stored_id,
        seen=seen,
        flagged=flagged,
        keyword_change=change,
        keywords=named if change is not None else None,
    )
    changes: list[tuple[str, object, object]] = []
    if seen is not None:
        changes.append(("seen", place.seen, seen))
    if flagged is not None:
        changes.append(("flagged", place.flagged, flagged))
    if change is not None:
        changes.append(("keywords", place.keywords, frozenset(after)))
    return request, changes


def record_round(
    services: Services,
    rng: random.Random,
    server: Snapshot,
    named: Sequence[str],
    stored: dict[str, str],
) -> list[Asked]:
    """Record this round's flag changes and moves through the use cases, in a random order.

    A message is named by at most one move of a round (and may also get a flag change): where
    an email ends when two moves of it wait for the same run is no question of this test."""
    asked: list[Asked] = []
    calls: list[Callable[[], None]] = []

    def flags_call(message_id: str) -> Callable[[], None]:
        def call() -> None:
            request, changes = _flag_request(rng, stored[message_id], server[message_id][0])
            outcome = services.flags().record(AGENT, request)
            assert len(outcome.records) == len(changes)
            for record, (attribute, before, after) in zip(outcome.records, changes, strict=True):
                asked.append(Asked(record.record_id.hex, message_id, attribute, before, after))

        return call

    def move_call(message_ids: list[str], destination: str) -> Callable[[], None]:
        def call() -> None:
            ids = [stored[m] for m in message_ids]
            if destination == ARCHIVE:
                request = OrganizeRequest(action="archive", stored_email_ids=ids)
            else:
                request = OrganizeRequest(action="move", stored_email_ids=ids, folder=destination)
            outcome = services.organizer().organize(AGENT, request)
            for message_id, changed in zip(message_ids, outcome.changed, strict=True):
                asked.append(
                    Asked(
                        changed.record.record_id.hex,
                        message_id,
                        "folder",
                        server[message_id][0].folder,
                        destination,
                    )
                )

        return call

    for message_id in rng.sample(list(named), FLAG_CALLS):
        calls.append(flags_call(message_id))
    unmoved = set(named)
    for destination in (ARCHIVE, INBOX, PROJECTS):
        candidates = sorted(m for m in unmoved if server[m][0].folder != destination)
        chosen = rng.sample(candidates, min(MOVES_PER_ACTION, len(candidates)))
        unmoved -= set(chosen)
        if chosen:
            calls.append(move_call(chosen, destination))
    rng.shuffle(calls)
    for call in calls:
        call()
    return asked


# -- where a kill landed -----------------------------------------------------------------------


def classify(asked: Sequence[Asked], records: Sequence[Record], server: Snapshot) -> set[str]:
    """Where a kill landed, per open record: a run carries one command after another, so one
    kill can leave one flag group converging while later groups and the moves wait; the kill
    counts once in each class its records show."""
    by_id = {r.record_id: r for r in records}
    assert set(by_id) == {a.record_id for a in asked}
    landed: set[str] = set()
    if all(r.state == MutationState.PENDING.value and r.attempts == 0 for r in records):
        landed.add(UNTOUCHED)
    for a in asked:
        record = by_id[a.record_id]
        if record.state in ENDED:
            continue
        places = server.get(a.message_id, [])
        if a.attribute != "folder":
            if any(p.attribute(a.attribute) == a.after for p in places):
                landed.add(AFTER_STORE)
            else:
                landed.add(BEFORE_STORE)
                if record.state == MutationState.CONVERGING.value:
                    landed.add(BEGUN)
            continue
        source = [p for p in places if p.folder == a.before]
        copied = any(p.folder == a.after for p in places)
        if not record.noted or not copied:
            landed.add(BEFORE_COPY)
        elif source:
            landed.add(COPY_TO_EXPUNGE)
            if any("\\deleted" in p.flags for p in source):
                landed.add(MARKED_DELETED)
        else:
            landed.add(AFTER_EXPUNGE)
    if not landed:
        landed.add(CARRIED)
    return landed


# -- what must hold once the round's records are carried ---------------------------------------


def check_round(
    asked: Sequence[Asked],
    records: Sequence[Record],
    before: Snapshot,
    after: Snapshot,
    rows: Sequence[StoredRow],
    stored: dict[str, str],
    endings: Counter[str],
) -> None:
    """What the requirement promises once a killed round was finished: the server compared
    with what it held before the round (`before`) and with what the round asked, and the
    store compared with the server. Every problem found is listed, not only the first."""
    by_id = {r.record_id: r for r in records}
    problems: list[str] = []
    for a in asked:
        record = by_id[a.record_id]
        if record.state not in ENDED:
            problems.append(f"record {a.record_id} ({a.attribute}) is still {record.state}")
        endings[f"{a.attribute}: {record.state} ({record.error_code})"] += 1

    # Every message exactly once on the server, and nothing else there.
    lost, appeared = set(before) - set(after), set(after) - set(before)
    if lost or appeared:
        problems.append(f"{len(lost)} messages lost, {len(appeared)} appeared")
    for places in after.values():
        if len(places) != 1:
            problems.append(f"message held {len(places)} times: {places}")
    asked_of: dict[tuple[str, str], Asked] = {(a.message_id, a.attribute): a for a in asked}
    for message_id, places in after.items():
        if message_id not in before or len(places) != 1:
            continue
        was, now = before[message_id][0], places[0]
        for attribute in ATTRIBUTES:
            value = now.attribute(attribute)
            request = asked_of.get((message_id, attribute))
            if request is None:
                if value != was.attribute(attribute):
                    problems.append(f"{attribute} of a message no record names changed")
                continue
            state = by_id[request.record_id].state
            if state == MutationState.COMPLETED.value and value != request.after:
                problems.append(f"completed {attribute} record {request.record_id} is not held")
            if state == MutationState.DEAD_LETTERED.value and value not in (
                request.before,
                request.after,
            ):
                problems.append(
                    f"dead-lettered {attribute} record {request.record_id} left a third value"
                )

    # One stored row per message, under its first identifier, naming what the server holds.
    found = Counter(r.message_id for r in rows)
    twice = [m for m, n in found.items() if n > 1]
    if twice or set(found) != set(after):
        problems.append(
            f"rows: {len(twice)} messages twice, {len(set(after) - set(found))} missing"
        )
    for row in rows:
        places = after.get(row.message_id, [])
        if stored.get(row.message_id) != row.stored_email_id:
            problems.append(f"row {row.stored_email_id} no longer has its first identifier")
        if len(places) != 1:
            continue
        place = places[0]
        if (row.folder, row.uid) != (place.folder, place.uid):
            problems.append(
                f"row {row.stored_email_id} names {row.folder}/{row.uid}, "
                f"not {place.folder}/{place.uid}"
            )
        if (row.seen, row.flagged, row.keywords) != (place.seen, place.flagged, place.keywords):
            problems.append(f"row {row.stored_email_id} shows other flags than the server")
    assert not problems, "\n".join(problems[:20])


# -- the scenario ------------------------------------------------------------------------------


@dataclass
class Pace:
    """How long the phases of an unkilled run took, from the process's start."""

    startup: float = 1.0  # until a flag record is begun
    flags: float = 0.05  # from then until every flag record ended
    flag_record: float = 0.005  # the flag phase's share of one flag record
    moves: float = 0.05  # from a move's progress first noted until every move record ended


@dataclass
class Tally:
    kills: int = 0
    landed: Counter[str] = field(default_factory=Counter)
    endings: Counter[str] = field(default_factory=Counter)
    aims: Counter[str] = field(default_factory=Counter)
    recoveries: Counter[int] = field(default_factory=Counter)

    def enough(self) -> bool:
        return (
            self.kills >= MIN_ROUNDS
            and self.landed[BEFORE_STORE] >= MIN_PER_WINDOW
            and self.landed[BEGUN] >= MIN_BEGUN
            and self.landed[COPY_TO_EXPUNGE] >= MIN_PER_WINDOW
        )

    def summary(self, seed: int, pace: Pace, seconds: float) -> str:
        lines = [
            f"seed {seed} ({SEED_ENV}); {self.kills} kills in {seconds:.1f}s; watched run: "
            f"start-up {pace.startup * 1000:.0f} ms, flags {pace.flags * 1000:.0f} ms "
            f"({pace.flag_record * 1000:.1f} ms a record), "
            f"moves {pace.moves * 1000:.0f} ms",
            f"aimed at: {dict(self.aims)}",
            "where the kills landed:",
            *(f"  {name}: {self.landed[name]}" for name in CLASSES),
            f"runs needed to finish a round after its kill: {dict(self.recoveries)}",
            "endings (state, failure code):",
            *(f"  {name}: {n}" for name, n in sorted(self.endings.items())),
        ]
        return "\n".join(lines)


@dataclass
class World:
    runner: Runner
    view: StoreView
    oracle: Oracle
    services: Services
    rng: random.Random
    named: list[str]
    stored: dict[str, str]
    server: Snapshot


def _trigger(
    asked: Sequence[Asked], aim: str, rng: random.Random
) -> Callable[[Sequence[Record]], bool]:
    """When to start the kill's delay: once a randomly chosen number of the flag records left
    pending (each flag command is begun, issued and settled in a few milliseconds, so the
    delay is aimed at one of them, not at the whole phase), or once a move's progress is
    noted."""
    moves = {a.record_id for a in asked if a.attribute == "folder"}
    if aim == "flags":
        k = rng.randint(1, len(asked) - len(moves))
        return lambda rs: sum(r.record_id not in moves and r.state != "pending" for r in rs) >= k
    return lambda rs: any(r.record_id in moves and r.noted for r in rs)


def watch(world: World, after_seq: int, asked: Sequence[Asked]) -> Pace:
    """Run once without a kill, noting when each phase began and ended."""
    moves = {a.record_id for a in asked if a.attribute == "folder"}
    proc, log = world.runner.start()
    started = time.monotonic()
    seen: dict[str, float] = {}
    deadline = started + RUN_TIMEOUT
    while proc.poll() is None:
        assert time.monotonic() < deadline, f"the watched run did not finish:\n{_tail(log)}"
        records = world.view.records(after_seq)
        now = time.monotonic() - started
        flag_records = [r for r in records if r.record_id not in moves]
        move_records = [r for r in records if r.record_id in moves]
        if any(r.state != "pending" for r in flag_records):
            seen.setdefault("flag begun", now)
        if flag_records and all(r.state in ENDED for r in flag_records):
            seen.setdefault("flags ended", now)
        if any(r.noted for r in move_records):
            seen.setdefault("move noted", now)
        if move_records and all(r.state in ENDED for r in move_records):
            seen.setdefault("moves ended", now)
        time.sleep(POLL)
    assert proc.returncode == 0, _tail(log)
    assert {"flag begun", "flags ended", "move noted", "moves ended"} <= set(seen), seen
    flags = max(seen["flags ended"] - seen["flag begun"], 0.002)
    return Pace(
        startup=seen["flag begun"],
        flags=flags,
        flag_record=flags / (len(asked) - len(moves)),
        moves=max(seen["moves ended"] - seen["move noted"], 0.002),
    )


def kill_round(
    world: World, after_seq: int, asked: Sequence[Asked], aim: str, pace: Pace
) -> set[str]:
    """Start the sync and kill it as `aim` says; where it landed (FINISHED when it ended
    first)."""
    proc, log = world.runner.start()
    started = time.monotonic()
    if aim == "start-up":
        delay = world.rng.uniform(0.0, pace.startup)
    else:
        fired = _trigger(asked, aim, world.rng)
        wait_for(
            lambda: proc.poll() is not None or fired(world.view.records(after_seq)),
            f"the run reaching its {aim} phase",
            timeout=RUN_TIMEOUT,
            interval=POLL,
        )
        span = pace.flag_record if aim == "flags" else pace.moves
        delay = world.rng.uniform(0.0, SPREAD * span)
        started = time.monotonic()
    try:
        code = proc.wait(timeout=max(0.0, delay - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        code = world.runner.kill(proc)
    if code != -signal.SIGKILL:
        assert code == 0, _tail(log)
        return {FINISHED}
    return classify(asked, world.view.records(after_seq), world.oracle.settled())


def _aim(rng: random.Random, tally: Tally) -> str:
    weights = {"start-up": 0.2, "flags": 0.3, "moves": 0.5}
    if tally.landed[BEFORE_STORE] >= MIN_PER_WINDOW:
        weights["start-up"] = 0.1
    if tally.landed[BEGUN] >= MIN_BEGUN:
        weights["flags"] = 0.15
    if tally.landed[COPY_TO_EXPUNGE] >= MIN_PER_WINDOW:
        weights["moves"] = 0.3
    names = list(weights)
    return rng.choices(names, [weights[n] for n in names])[0]


def finish_round(world: World, after_seq: int, asked: Sequence[Asked], tally: Tally) -> None:
    """Run the sync to completion (again while a record is open), then check everything."""
    runs = 0
    while True:
        runs += 1
        world.runner.complete()
        records = world.view.records(after_seq)
        if runs == 3 or all(r.state in ENDED for r in records):
            break
    tally.recoveries[runs] += 1
    before = world.server
    world.server = world.oracle.snapshot()
    check_round(
        asked, records, before, world.server, world.view.rows(), world.stored, tally.endings
    )


def play(world: World, seed: int) -> Tally:
    tally = Tally()
    clock = time.monotonic()
    after_seq = world.view.last_seq()
    asked = record_round(world.services, world.rng, world.server, world.named, world.stored)
    pace = watch(world, after_seq, asked)
    finish_round(world, after_seq, asked, tally)
    tally.endings.clear()
    rounds = 0
    while not tally.enough() and rounds < MAX_ROUNDS:
        rounds += 1
        aim = _aim(world.rng, tally)
        after_seq = world.view.last_seq()
        asked = record_round(world.services, world.rng, world.server, world.named, world.stored)
        landed = kill_round(world, after_seq, asked, aim, pace)
        if FINISHED not in landed:
            tally.kills += 1
            tally.aims[aim] += 1
        tally.landed.update(landed)
        finish_round(world, after_seq, asked, tally)
    print("\n" + tally.summary(seed, pace, time.monotonic() - clock))
    return tally


@pytest.fixture
def seed() -> int:
    given = os.environ.get(SEED_ENV)
    return int(given) if given else random.SystemRandom().randrange(1, 2**32)


def test_sigkill_while_records_are_carried_ends_every_record_and_keeps_every_message_once(
    tmp_path: Path, dovecot_without_move: DovecotServer, seed: int
) -> None:
    print(f"\nseed {seed} (replay with {SEED_ENV}={seed})")
    suffix = uuid.uuid4().hex[:10]
    account = dovecot_without_move.add_user(f"kill-{suffix}", f"pw-{suffix}")
    named, bystanders = fill(account)
    config = _config(tmp_path, account)
    env = {**os.environ, SECRET_ENV: account.password}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    os.environ[SECRET_ENV] = account.password
    runner = Runner(config, env, tmp_path / "logs")
    oracle = Oracle(account)
    try:
        runner.complete()
        deployment = load_deployment(config)
        with Services.open(deployment) as services:
            view = StoreView(deployment.store.data_dir / "mailfathom.sqlite3")
            try:
                server = oracle.snapshot()
                assert sorted(server) == sorted(named + bystanders)
                stored = {r.message_id: r.stored_email_id for r in view.rows()}
                assert sorted(stored) == sorted(server)
                world = World(
                    runner, view, oracle, services, random.Random(seed), named, stored, server
                )
                tally = play(world, seed)
            finally:
                view.close()
        # Bystanders, \Deleted ones included, are where and as they were appended.
        final = oracle.snapshot()
        for message_id, (folder, flags) in zip(bystanders, BYSTANDERS, strict=True):
            expected = frozenset(f.casefold() for f in flags.split())
            assert [(p.folder, p.flags) for p in final[message_id]] == [(folder, expected)]
    finally:
        oracle.close()
        runner.close()
        os.environ.pop(SECRET_ENV, None)
    assert tally.kills >= MIN_ROUNDS, tally.kills
    assert tally.landed[BEFORE_STORE] >= MIN_PER_WINDOW, dict(tally.landed)
    assert tally.landed[BEGUN] >= MIN_BEGUN, dict(tally.landed)
    assert tally.landed[COPY_TO_EXPUNGE] >= MIN_PER_WINDOW, dict(tally.landed)
