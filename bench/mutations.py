"""Mutation benchmark: flag changes and moves recorded and converged, against direct imaplib.

    uv run python bench/mutations.py [--changes N] [--extra M] [--repeat R] [--profile]
        [--postgres | --database-url URL] [--worktree] [--dir DIR] [--keep]

A private Dovecot is started on loopback, and a second one that announces no MOVE (Dovecot's
`imap_capability` setting, as tests/organize/conftest.py does). Every measured run gets a
fresh user whose INBOX holds the same N + M generated messages (see `mailgen.py`; written
straight into the Maildir, then indexed by Dovecot) and an empty Archive; N of them, the same
ones every time (chosen by Message-ID with a fixed seed, so their UIDs form many ranges), are
changed or moved. Loading is setup and is not part of any figure.

Operations, each R times, the sides of one repetition one after the other (never
concurrently), their order alternating between repetitions:

  seen              MailFathom: `set_mail_flags` (the use case, in process) with seen=true on
                    each of the N emails, one call per email; imaplib: one `UID STORE
                    <set> +FLAGS (\\Seen)`, and one `UID STORE` per message
  flagged+keyword   MailFathom: one call per email with flagged=true and a keyword added
                    (two records per email); imaplib: one `UID STORE <set> +FLAGS
                    (\\Flagged kw)`
  archive, MOVE     MailFathom: `organize_email` archive in calls of 100 emails (the tool's
                    bound); imaplib: one `UID MOVE <set> Archive`
  archive, COPY     the same on the Dovecot without MOVE; imaplib: `UID COPY`, `UID STORE
                    +FLAGS.SILENT (\\Deleted)` and `UID EXPUNGE` of the set

MailFathom's side is a deployment (SQLite by default; PostgreSQL with --postgres or
--database-url) synchronized once before the clock starts. The clock starts at the first
call; after the last call the account's synchronization pass runs
(`AccountSynchronizer.run_once`, what `mailfathom sync` runs: the recorded changes carried
over the pass's session, then the folders read back). imaplib's clock starts before it
connects and logs in (the pass opens its own session too). On both sides a separate process,
an independent IMAP client logged in beforehand, polls the server every few milliseconds
(NOOP, then UID SEARCH, and STATUS of Archive for moves) from the moment the convergence or
the command starts (MailFathom's calls open no connection) until every one of the N messages
shows the value, or is in Archive and none is left in INBOX: that moment is the figure
"call to visible". Afterwards (untimed) the server is checked message by message, and every
MailFathom record must have ended `completed`.

Each MailFathom run also counts the SQL statements it ran and the IMAP commands it sent. With
--profile, one more MailFathom run of each operation is profiled with pyinstrument (the calls
and the convergence apart). Results are printed and written as JSON (profiles as text and
HTML) to bench/results/, which git ignores.

The code measured is a copy of src/ and tests/ taken at the start (the last commit, or the
work tree with --worktree).
"""

from __future__ import annotations

import argparse
import contextlib
import imaplib
import json
import os
import random
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
sys.path.insert(0, str(BENCH_DIR))

import mailgen  # noqa: E402
from machine import environment, log  # noqa: E402

if TYPE_CHECKING:
    from mailfathom.bootstrap import Services
    from mailfathom.domain.config import AccountConfig
    from servers.dovecot import DovecotServer, ImapAccount

PASSWORD = "bench-password"
ARCHIVE = "Archive"
KEYWORD = "benchlater"
ORGANIZE_BATCH = 100  # organize_email's bound on emails per call
POLL_SECONDS = 0.005
VISIBLE_TIMEOUT = 600.0


@dataclass(frozen=True)
class Operation:
    key: str
    title: str
    kind: str  # "flags" or "move"
    server: str  # "move" (Dovecot as it comes) or "nomove"
    baselines: tuple[str, ...]
    criteria: str = ""  # for flags: what a message still lacking the value matches


OPERATIONS = (
    Operation("seen", "seen=true", "flags", "move", ("store-set", "store-each"), "UNSEEN"),
    Operation(
        "flagged+keyword",
        f"flagged=true + keyword {KEYWORD}",
        "flags",
        "move",
        ("store-set",),
        f"OR UNFLAGGED UNKEYWORD {KEYWORD}",
    ),
    Operation("archive-move", "archive (MOVE)", "move", "move", ("move-set",)),
    Operation(
        "archive-copy", "archive (COPY + STORE + UID EXPUNGE)", "move", "nomove", ("copy-set",)
    ),
)
BASELINE_TITLES = {
    "store-set": "one UID STORE over the UID set",
    "store-each": "one UID STORE per message",
    "move-set": "one UID MOVE over the UID set",
    "copy-set": "UID COPY, UID STORE \\Deleted, UID EXPUNGE over the UID set",
}


# --------------------------------------------------------------------------- watcher


def uid_set(uids: Sequence[int]) -> str:
    ordered = sorted(uids)
    ranges = []
    start = prev = ordered[0]
    for uid in ordered[1:]:
        if uid != prev + 1:
            ranges.append(f"{start}:{prev}" if prev != start else str(start))
            start = uid
        prev = uid
    ranges.append(f"{start}:{prev}" if prev != start else str(start))
    return ",".join(ranges)


def _visible(conn: imaplib.IMAP4, spec: dict[str, Any]) -> bool:
    conn.noop()
    conn.untagged_responses.clear()
    if spec["kind"] == "flags":
        typ, data = conn.uid("SEARCH", "UID", spec["uids"], spec["criteria"])
        return typ == "OK" and not (data and data[0] and data[0].split())
    typ, data = conn.uid("SEARCH", "UID", spec["uids"])
    if typ != "OK" or (data and data[0] and data[0].split()):
        return False
    typ, data = conn.status(ARCHIVE, "(MESSAGES)")
    found = re.search(rb"MESSAGES (\d+)", data[0] or b"") if typ == "OK" and data else None
    return found is not None and int(found.group(1)) >= int(spec["count"])


def watch_main(spec: dict[str, Any]) -> None:
    """The independent client: log in, answer `ready`, and from `go` on poll until what is
    asked shows on the server; print the moment (CLOCK_MONOTONIC, shared by all processes)."""
    conn = imaplib.IMAP4(spec["host"], spec["port"])
    conn.login(spec["user"], spec["password"])
    conn.select("INBOX", readonly=True)
    if _visible(conn, spec):
        print(json.dumps({"error": "already visible before the clock started"}), flush=True)
        return
    print("ready", flush=True)
    sys.stdin.readline()
    started = time.monotonic()
    polls = 0
    while True:
        polls += 1
        if _visible(conn, spec):
            seen = time.monotonic()
            break
        if time.monotonic() - started > spec["timeout"]:
            print(json.dumps({"error": "not visible in time", "polls": polls}), flush=True)
            return
        time.sleep(POLL_SECONDS)
    print(json.dumps({"seen_at": seen, "polls": polls, "started_at": started}), flush=True)
    with contextlib.suppress(Exception):
        conn.logout()


class Watcher:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--watch", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline().strip() if ready else "no answer"
        if line != "ready":
            self.proc.kill()
            raise RuntimeError(f"the watching client did not start: {line}")

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def seen_at(self) -> dict[str, Any]:
        out, _ = self.proc.communicate(timeout=VISIBLE_TIMEOUT + 60)
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        if "error" in result:
            raise RuntimeError(f"the watching client: {result['error']}")
        return result


# --------------------------------------------------------------------------- mailboxes


@dataclass
class Mail:
    raws: list[bytes]
    message_ids: list[str]
    chosen: set[str]  # Message-IDs (without brackets) of the messages changed or moved


def make_mail(changes: int, extra: int, seed: int) -> Mail:
    raws, ids = [], []
    for message in mailgen.generate(
        changes + extra, seed=seed, folders=("INBOX",), junk_folder=None
    ):
        raws.append(message.raw)
        found = re.search(rb"^Message-ID: <([^>]+)>", message.raw, re.MULTILINE)
        assert found is not None
        ids.append(found.group(1).decode())
    chosen = set(random.Random(seed).sample(ids, changes))
    return Mail(raws, ids, chosen)


def load_user(server: DovecotServer, name: str, mail: Mail) -> ImapAccount:
    """A new user whose INBOX holds every message unflagged and unseen, and an empty
    Archive: files written into the Maildir, then Dovecot indexes them."""
    account = server.add_user(name, PASSWORD)
    root = server.maildir(name)
    inbox = root / "INBOX"
    for sub in ("cur", "new", "tmp"):
        (inbox / sub).mkdir(parents=True, exist_ok=True)
    base = int(datetime(2025, 1, 6, tzinfo=UTC).timestamp())
    for index, raw in enumerate(mail.raws):
        when = base + 60 * index
        path = inbox / "cur" / f"{when}.M{index:06d}P1.bench,S={len(raw)}:2,"
        path.write_bytes(raw)
        os.utime(path, (when, when))
    if os.geteuid() == 0:
        home = server.home(name)
        for entry in [home, *home.rglob("*")]:
            os.chown(entry, server.mail_uid, server.mail_gid)
    server.create_folder(name, ARCHIVE)
    for folder in ("INBOX", ARCHIVE):
        server.doveadm("mailbox", "status", "-u", name, "messages", folder, timeout=600)
    return account


def connect(account: ImapAccount) -> imaplib.IMAP4:
    conn = imaplib.IMAP4(account.host, account.port)
    conn.login(account.username, account.password)
    return conn


def server_state(account: ImapAccount) -> dict[str, dict[str, set[str]]]:
    """Message-ID to its flags (lower case), per folder, as the server holds them."""
    conn = connect(account)
    found: dict[str, dict[str, set[str]]] = {}
    try:
        for folder in ("INBOX", ARCHIVE):
            conn.select(folder, readonly=True)
            typ, data = conn.uid(
                "FETCH", "1:*", "(UID FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])"
            )
            assert typ == "OK"
            held: dict[str, set[str]] = {}
            for entry in data:
                if not isinstance(entry, tuple):
                    continue
                flags = re.search(rb"FLAGS \(([^)]*)\)", entry[0])
                mid = re.search(rb"<([^>]+)>", entry[1])
                if mid is not None:
                    words = flags.group(1).decode().lower().split() if flags else []
                    held[mid.group(1).decode()] = set(words)
            found[folder] = held
    finally:
        with contextlib.suppress(Exception):
            conn.logout()
    return found


def inbox_uids(account: ImapAccount) -> dict[str, int]:
    """Message-ID to UID in INBOX (this also warms Dovecot's cache of the headers)."""
    conn = connect(account)
    try:
        conn.select("INBOX", readonly=True)
        typ, data = conn.uid("FETCH", "1:*", "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
        assert typ == "OK"
        found = {}
        for entry in data:
            if isinstance(entry, tuple):
                uid = re.search(rb"UID (\d+)", entry[0])
                mid = re.search(rb"<([^>]+)>", entry[1])
                if uid and mid:
                    found[mid.group(1).decode()] = int(uid.group(1))
        return found
    finally:
        with contextlib.suppress(Exception):
            conn.logout()


def check_server(account: ImapAccount, op: Operation, mail: Mail) -> None:
    """Every chosen message shows the change, and no other message does."""
    state = server_state(account)
    inbox, archive = state["INBOX"], state[ARCHIVE]
    if op.kind == "move":
        if set(archive) != mail.chosen or set(inbox) != set(mail.message_ids) - mail.chosen:
            raise RuntimeError(
                f"{op.key}: Archive holds {len(archive)}, INBOX {len(inbox)} "
                f"(wanted {len(mail.chosen)} and {len(mail.message_ids) - len(mail.chosen)})"
            )
        return
    wanted = {"\\seen"} if op.key == "seen" else {"\\flagged", KEYWORD}
    if set(inbox) != set(mail.message_ids) or archive:
        raise RuntimeError(f"{op.key}: the messages moved")
    wrong = [m for m, f in inbox.items() if (wanted <= f) != (m in mail.chosen)]
    if wrong:
        raise RuntimeError(f"{op.key}: {len(wrong)} messages do not show what was asked")


# --------------------------------------------------------------------------- counting


class Counts:
    """SQL statements (by verb and table) and IMAP commands sent by this process."""

    def __init__(self) -> None:
        self.sql: Counter[str] = Counter()
        self.imap: Counter[str] = Counter()
        self.on = False

    def install(self) -> None:
        import sqlalchemy as sa

        def statement(conn: Any, cursor: Any, text: str, *rest: Any) -> None:
            if self.on:
                self.sql[_sql_kind(text)] += 1

        sa.event.listen(sa.engine.Engine, "before_cursor_execute", statement)
        sent = imaplib.IMAP4.send

        def send(conn: imaplib.IMAP4, data: Any) -> None:
            prefix: bytes = getattr(conn, "tagpre")  # noqa: B009 (bytes, typed as str)
            if self.on and isinstance(data, bytes) and data.startswith(prefix):
                words = data.split(None, 3)[1:3]
                name = b" ".join(words if words[:1] == [b"UID"] else words[:1])
                self.imap[name.decode("ascii", "replace").upper()] += 1
            sent(conn, data)

        setattr(imaplib.IMAP4, "send", send)  # noqa: B010

    @contextlib.contextmanager
    def counting(self) -> Iterator[tuple[Counter[str], Counter[str]]]:
        self.sql, self.imap, self.on = Counter(), Counter(), True
        try:
            yield self.sql, self.imap
        finally:
            self.on = False


def _sql_kind(statement: str) -> str:
    words = statement.split()
    if not words:
        return "?"
    verb = words[0].upper()
    upper = [w.upper().strip('"') for w in words]
    with contextlib.suppress(ValueError, IndexError):
        if verb == "INSERT":
            return f"INSERT {upper[upper.index('INTO') + 1].lower()}"
        if verb == "UPDATE":
            return f"UPDATE {upper[1].lower()}"
        if verb == "DELETE":
            return f"DELETE {upper[upper.index('FROM') + 1].lower()}"
        if verb in ("SELECT", "WITH"):
            return f"SELECT {upper[upper.index('FROM') + 1].lower().rstrip(',')}"
    return verb


COUNTS = Counts()


# --------------------------------------------------------------------------- MailFathom


@dataclass
class Stores:
    """Where each deployment keeps its store: its own SQLite file, a fresh database of a
    private PostgreSQL (--postgres), or one given database (--database-url; each deployment
    has an account of its own there)."""

    work: Path
    database_url: str | None = None
    postgres: Any = None
    made: list[str] = field(default_factory=list)

    def next_url(self) -> str | None:
        if self.postgres is not None:
            name = f"bench_{uuid.uuid4().hex[:10]}"
            self.made.append(name)
            return str(self.postgres.create_database(name))
        return self.database_url

    @property
    def label(self) -> str:
        if self.postgres is not None:
            return "PostgreSQL (private server, fsync off)"
        return "PostgreSQL (given URL)" if self.database_url else "SQLite"


def account_config(account: ImapAccount, account_id: str) -> AccountConfig:
    from mailfathom.domain.config import (
        AccountConfig,
        AccountKind,
        FolderMapping,
        ImapConnection,
        SecretRef,
        SyncMode,
        TlsMode,
    )
    from mailfathom.domain.folders import FolderRole

    env = f"MF_BENCH_SECRET_{account_id.upper().replace('-', '_')}"
    os.environ[env] = account.password
    return AccountConfig(
        account_id=account_id,
        display_name="Bench",
        kind=AccountKind.IMAP,
        folders=(
            FolderMapping("INBOX", "INBOX", FolderRole.INBOX),
            FolderMapping(ARCHIVE, ARCHIVE, FolderRole.ARCHIVE),
        ),
        imap=ImapConnection(
            host=account.host,
            port=account.port,
            username=account.username,
            secret=SecretRef(env=env),
            tls=TlsMode.NONE,
            timeout_seconds=60,
        ),
        sync_mode=SyncMode.POLLING,
    )


@contextlib.contextmanager
def deployment(
    stores: Stores, account: ImapAccount, label: str
) -> Iterator[tuple[Services, AccountConfig]]:
    from mailfathom.bootstrap import Services
    from mailfathom.domain.config import DeploymentConfig, StoreConfig

    config_account = account_config(account, f"b-{label}-{uuid.uuid4().hex[:6]}")
    data = stores.work / f"store-{config_account.account_id}"
    config = DeploymentConfig(
        store=StoreConfig(data_dir=data, database_url=stores.next_url()),
        accounts=(config_account,),
    )
    services = Services.open(config)
    try:
        yield services, config_account
    finally:
        services.close()


def stored_ids(services: Services, account_id: str) -> dict[str, str]:
    """Message-ID (without brackets) to stored email id."""
    import sqlalchemy as sa

    from mailfathom.adapters.sql.schema import messages

    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(messages.c.message_id_header, messages.c.stored_email_id).where(
                messages.c.account_id == account_id
            )
        ).all()
    return {str(mid).strip().strip("<>"): str(sid) for mid, sid in rows if mid}


def record_states(services: Services, account_id: str) -> dict[str, int]:
    import sqlalchemy as sa

    from mailfathom.adapters.sql.schema import mutation_records as r

    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(r.c.state, sa.func.count())
            .where(r.c.account_id == account_id)
            .group_by(r.c.state)
        ).all()
    return {str(state): int(n) for state, n in rows}


def folders_of(services: Services, ids: Sequence[str]) -> Counter[str]:
    import sqlalchemy as sa

    from mailfathom.adapters.sql.schema import folders, messages

    wanted = {uuid.UUID(i) for i in ids}
    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(messages.c.stored_email_id, folders.c.alias).join(
                folders, folders.c.folder_id == messages.c.folder_id
            )
        ).all()
    return Counter(str(alias) for sid, alias in rows if sid in wanted)


def record_calls(services: Services, op: Operation, ids: Sequence[str]) -> Callable[[], int]:
    """The calls an agent makes, ready to run: answers how many records they wrote."""
    from mailfathom.app.flags.set_mail_flags import FlagChangeRequest
    from mailfathom.app.organize.organize_email import OrganizeRequest
    from mailfathom.domain.access import ALL_PERMISSIONS, Caller

    agent = Caller(permissions=ALL_PERMISSIONS, label="bench-agent")
    if op.kind == "flags":
        recorder = services.flags()
        if op.key == "seen":
            requests = [FlagChangeRequest(i, seen=True) for i in ids]
        else:
            requests = [
                FlagChangeRequest(i, flagged=True, keyword_change="add", keywords=[KEYWORD])
                for i in ids
            ]

        def flags() -> int:
            return sum(len(recorder.record(agent, r).records) for r in requests)

        return flags
    organizer = services.organizer()
    batches = [
        OrganizeRequest(action="archive", stored_email_ids=list(ids[s : s + ORGANIZE_BATCH]))
        for s in range(0, len(ids), ORGANIZE_BATCH)
    ]

    def moves() -> int:
        return sum(len(organizer.organize(agent, b).changed) for b in batches)

    return moves


def watch_spec(account: ImapAccount, op: Operation, uids: Sequence[int]) -> dict[str, Any]:
    return {
        "host": account.host,
        "port": account.port,
        "user": account.username,
        "password": account.password,
        "kind": op.kind,
        "uids": uid_set(uids),
        "criteria": op.criteria,
        "count": len(uids),
        "timeout": VISIBLE_TIMEOUT,
    }


def run_mailfathom(
    server: DovecotServer,
    stores: Stores,
    op: Operation,
    mail: Mail,
    profile_base: Path | None = None,
) -> dict[str, Any]:
    name = f"mf-{op.key.replace('+', '-')}-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    account = load_user(server, name, mail)
    loaded = time.monotonic()
    with deployment(stores, account, op.key[:8].replace("+", "")) as (services, config):
        sync = services.account_synchronizer()
        sync.run_once(config)
        synced = time.monotonic()
        by_mid = stored_ids(services, config.account_id)
        ids = [by_mid[m] for m in mail.message_ids if m in mail.chosen]
        uids = [u for m, u in inbox_uids(account).items() if m in mail.chosen]
        assert len(ids) == len(uids) == len(mail.chosen)
        calls = record_calls(services, op, ids)
        carried: dict[str, float] = {}
        owner = getattr(sync, "_owner_changes", None)
        if owner is not None:
            carry = owner.carry

            def timed_carry(*args: Any) -> None:
                carried["start"] = time.monotonic()
                try:
                    carry(*args)
                finally:
                    carried["end"] = time.monotonic()

            setattr(owner, "carry", timed_carry)  # noqa: B010
        watcher = Watcher(watch_spec(account, op, uids))
        profiler: Any = None
        if profile_base is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.001)
        with COUNTS.counting() as (record_sql, record_imap):
            if profiler is not None:
                profiler.start()
            t0 = time.monotonic()
            records = calls()
            t1 = time.monotonic()
            if profiler is not None:
                profiler.stop()
                _write_profile(profiler, profile_base, "calls")
        watcher.go()
        if profiler is not None:
            profiler = type(profiler)(interval=0.001)
        with COUNTS.counting() as (sync_sql, sync_imap):
            if profiler is not None:
                profiler.start()
            t2 = time.monotonic()
            sync.run_once(config)
            t3 = time.monotonic()
            if profiler is not None:
                profiler.stop()
                _write_profile(profiler, profile_base, "convergence")
        seen = watcher.seen_at()
        states = record_states(services, config.account_id)
        if states != {"completed": records}:
            raise RuntimeError(f"{op.key}: records ended {states}, {records} written")
        if op.kind == "move":
            placed = folders_of(services, ids)
            if placed != Counter({ARCHIVE: len(ids)}):
                raise RuntimeError(f"{op.key}: stored rows are in {dict(placed)}")
        stored_after = len(stored_ids(services, config.account_id))
        if stored_after != len(mail.message_ids):
            raise RuntimeError(f"{op.key}: {stored_after} rows after the pass")
    check_server(account, op, mail)
    n = len(mail.chosen)
    result = {
        "changes": n,
        "records": records,
        "record_s": t1 - t0,
        "record_ms_per_change": 1000 * (t1 - t0) / n,
        "converge_s": t3 - t2,
        "converge_ms_per_change": 1000 * (t3 - t2) / n,
        "carry_s": carried["end"] - carried["start"] if carried else None,
        "until_carried_s": carried["end"] - t2 if carried else None,
        "read_back_s": t3 - carried["end"] if carried else None,
        "until_returned_s": t3 - t0,
        "visible_s": seen["seen_at"] - t0,
        "visible_after_convergence_started_s": seen["seen_at"] - t2,
        "visible_ms_per_change": 1000 * (seen["seen_at"] - t0) / n,
        "polls": seen["polls"],
        "record_sql": dict(record_sql.most_common()),
        "record_imap": dict(record_imap.most_common()),
        "converge_sql": dict(sync_sql.most_common()),
        "converge_imap": dict(sync_imap.most_common()),
        "setup_load_s": loaded - started,
        "setup_initial_sync_s": synced - loaded,
    }
    log(
        f"  mailfathom {op.key}: calls {result['record_s']:.2f} s, pass "
        f"{result['converge_s']:.2f} s, visible after {result['visible_s']:.2f} s"
    )
    return result


def _write_profile(profiler: Any, base: Path | None, phase: str) -> None:
    assert base is not None
    path = base.with_name(f"{base.name}-{phase}")
    path.with_suffix(".txt").write_text(profiler.output_text(unicode=True, show_all=False))
    path.with_suffix(".html").write_text(profiler.output_html())


# --------------------------------------------------------------------------- imaplib


def run_imaplib(server: DovecotServer, op: Operation, mail: Mail, how: str) -> dict[str, Any]:
    name = f"im-{op.key.replace('+', '-')}-{uuid.uuid4().hex[:6]}"
    account = load_user(server, name, mail)
    uids = sorted(u for m, u in inbox_uids(account).items() if m in mail.chosen)
    assert len(uids) == len(mail.chosen)
    target = uid_set(uids)
    watcher = Watcher(watch_spec(account, op, uids))
    flags = "(\\Seen)" if op.key == "seen" else f"(\\Flagged {KEYWORD})"
    with COUNTS.counting() as (_, commands):
        watcher.go()
        t0 = time.monotonic()
        conn = connect(account)
        conn.select("INBOX")
        t_ready = time.monotonic()
        if how == "store-set":
            typ, _ = conn.uid("STORE", target, "+FLAGS", flags)
            assert typ == "OK"
        elif how == "store-each":
            for uid in uids:
                typ, _ = conn.uid("STORE", str(uid), "+FLAGS", flags)
                assert typ == "OK"
        elif how == "move-set":
            typ, _ = conn.uid("MOVE", target, ARCHIVE)
            assert typ == "OK"
        elif how == "copy-set":
            for args in (
                ("COPY", target, ARCHIVE),
                ("STORE", target, "+FLAGS.SILENT", "(\\Deleted)"),
                ("EXPUNGE", target),
            ):
                typ, _ = conn.uid(*args)
                assert typ == "OK", args
        else:
            raise ValueError(how)
        t1 = time.monotonic()
        with contextlib.suppress(Exception):
            conn.logout()
    seen = watcher.seen_at()
    check_server(account, op, mail)
    n = len(uids)
    result = {
        "how": how,
        "changes": n,
        "uid_ranges": target.count(",") + 1,
        "command_s": t1 - t_ready,
        "connect_select_s": t_ready - t0,
        "until_returned_s": t1 - t0,
        "visible_s": seen["seen_at"] - t0,
        "visible_ms_per_change": 1000 * (seen["seen_at"] - t0) / n,
        "polls": seen["polls"],
        "imap": dict(commands.most_common()),
    }
    log(
        f"  imaplib {op.key} ({how}): command {t1 - t_ready:.3f} s, "
        f"visible {result['visible_s']:.3f} s"
    )
    return result


# --------------------------------------------------------------------------- setup


def ensure_dovecot() -> None:
    """Install Dovecot from Debian when it is missing (as scripts/test does)."""
    if shutil.which("dovecot") or Path("/usr/sbin/dovecot").exists():
        return
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    log("installing dovecot-imapd")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    policy = Path("/usr/sbin/policy-rc.d")  # package scripts must not start a system Dovecot
    created = False
    if not policy.exists() and os.geteuid() == 0:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        created = True
    try:
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", "dovecot-imapd"],
            check=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    finally:
        if created:
            policy.unlink(missing_ok=True)


def snapshot_code(work: Path, worktree: bool) -> dict[str, Any]:
    """A copy of src/ and tests/ that this run imports: the last commit, or the work tree."""
    target = work / "code"
    target.mkdir()

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
        return out.stdout.strip()

    head = git("rev-parse", "HEAD")
    if worktree:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
        for name in ("src", "tests"):
            shutil.copytree(REPO / name, target / name, ignore=ignore)
    else:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", head, "src", "tests"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    sys.path[:0] = [str(target / "src"), str(target / "tests")]
    import mailfathom

    if not Path(mailfathom.__file__).is_relative_to(target):
        raise RuntimeError(f"mailfathom was imported from {mailfathom.__file__}")
    return {
        "snapshot": str(target),
        "source": "work tree" if worktree else "last commit",
        "git_head": head,
        "git_head_subject": git("log", "-1", "--format=%s"),
        "uncommitted_in_src": bool(git("status", "--porcelain", "--", "src")),
    }


def quiet_logs(path: Path) -> None:
    """Log as a service does (JSON lines at INFO), into a file rather than this terminal."""
    from mailfathom.entrypoints import logs

    logs.configure(json=True)
    sink = logs._sink
    assert sink is not None
    sink.direct_to(path.open("a", encoding="utf-8", buffering=1))


def capabilities(account: ImapAccount) -> list[str]:
    conn = connect(account)
    try:
        typ, data = conn.capability()
        assert typ == "OK"
        return str(data[-1].decode()).split()
    finally:
        conn.logout()


# --------------------------------------------------------------------------- report


def median_run(runs: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    return sorted(runs, key=lambda r: float(r[key]))[len(runs) // 2]


def spread(values: Sequence[float], digits: int = 2) -> str:
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def print_report(results: dict[str, Any], operations: Sequence[Operation]) -> None:
    env = results["environment"]
    print()
    print(
        f"machine: {env['cores']} cores ({env['cpu']}), {env['memory_mb']} MB, kernel "
        f"{env['kernel']}, load {env['loadavg_at_start'][0]:.2f} at start; Python "
        f"{env['python']}, SQLite {env['sqlite']}, SQLAlchemy {env['sqlalchemy']}, "
        f"{env['dovecot']}"
    )
    code = results["code"]
    print(
        f"code: {code['git_head'][:10]} ({code['source']}); store: {results['store']}; "
        f"{results['changes']} changes among {results['messages']} messages in INBOX, "
        f"{results['repeat']} runs each (median, min–max in brackets)"
    )
    print()
    print("call to visible on the server, seconds")
    print(f"| {'operation':<38} | {'MailFathom':>22} | {'imaplib':>22} | {'ratio':>16} | baseline")
    print(f"| {'-' * 38} | {'-' * 22}: | {'-' * 22}: | {'-' * 16}: | ---")
    for op in operations:
        entry = results["operations"][op.key]
        ours = [r["visible_s"] for r in entry["mailfathom"]]
        for how in op.baselines:
            theirs = [r["visible_s"] for r in entry[how]]
            ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
            print(
                f"| {op.title:<38} | {spread(ours):>22} | {spread(theirs, 3):>22} | "
                f"{spread(ratios, 1):>16} | {BASELINE_TITLES[how]}"
            )
    print()
    print("MailFathom, median run of each operation")
    print(
        "| operation | calls s | ms/change | pass s (until carried + read back) | "
        "call to visible s | ms/change | SQL in calls | SQL in pass | IMAP commands in pass"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for op in operations:
        runs = results["operations"][op.key]["mailfathom"]
        m = median_run(runs, "visible_s")
        imap = ", ".join(f"{k} {v}" for k, v in m["converge_imap"].items())
        carried = (
            f"{m['converge_s']:.2f} ({m['until_carried_s']:.2f} + {m['read_back_s']:.2f})"
            if m["until_carried_s"] is not None
            else f"{m['converge_s']:.2f}"
        )
        print(
            f"| {op.title} | {m['record_s']:.2f} | {m['record_ms_per_change']:.2f} | {carried} | "
            f"{m['visible_s']:.2f} | {m['visible_ms_per_change']:.2f} | "
            f"{sum(m['record_sql'].values())} | {sum(m['converge_sql'].values())} | {imap} |"
        )
    print()
    print("imaplib, median run")
    print(
        "| operation | baseline | connect+login+SELECT s | command s | call to visible s "
        "| commands |"
    )
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for op in operations:
        for how in op.baselines:
            m = median_run(results["operations"][op.key][how], "visible_s")
            imap = ", ".join(f"{k} {v}" for k, v in m["imap"].items())
            print(
                f"| {op.title} | {BASELINE_TITLES[how]} | {m['connect_select_s']:.3f} | "
                f"{m['command_s']:.3f} | {m['visible_s']:.3f} | {imap} |"
            )
    print()
    print("SQL statements of the median MailFathom run, per change (calls; pass)")
    for op in operations:
        m = median_run(results["operations"][op.key]["mailfathom"], "visible_s")
        n = m["changes"]
        calls = ", ".join(f"{k} {v / n:.2f}" for k, v in m["record_sql"].items())
        passes = ", ".join(f"{k} {v}" for k, v in m["converge_sql"].items())
        print(f"  {op.title}: calls: {calls}")
        print(f"  {' ' * len(op.title)}  pass (total): {passes}")
    if results.get("profiles"):
        print()
        print("profiles:")
        for path in results["profiles"]:
            print(f"  {path}")
    print(f"\nwall time of the benchmark: {results['wall_s']:.0f} s")


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=1000, help="messages changed or moved")
    parser.add_argument("--extra", type=int, default=200, help="INBOX messages left alone")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--only", action="append", choices=[op.key for op in OPERATIONS], help="operations"
    )
    parser.add_argument("--postgres", action="store_true", help="stores in a private PostgreSQL")
    parser.add_argument("--database-url", help="stores in this database (SQLAlchemy URL)")
    parser.add_argument("--profile", action="store_true", help="one more, profiled, run each")
    parser.add_argument("--worktree", action="store_true", help="measure src/ as it is now")
    parser.add_argument("--dir", default="/var/tmp", help="where the scratch directory is made")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--watch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watch:
        watch_main(json.loads(args.watch))
        return 0

    wall_start = time.monotonic()
    ensure_dovecot()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mailfathom-mutations-", dir=args.dir))
    code = snapshot_code(work, args.worktree)
    from servers.dovecot import DovecotServer

    quiet_logs(work / "mailfathom.log")
    COUNTS.install()
    operations = [op for op in OPERATIONS if not args.only or op.key in args.only]
    results: dict[str, Any] = {
        "benchmark": "mutations",
        "started_at": stamp,
        "command": " ".join(["uv run python bench/mutations.py", *sys.argv[1:]]),
        "code": code,
        "environment": environment({"dovecot": ["dovecot", "--version"]}),
        "changes": args.changes,
        "messages": args.changes + args.extra,
        "repeat": args.repeat,
        "operations": {},
        "profiles": [],
    }
    env = results["environment"]
    log(
        f"code {code['git_head'][:10]} ({code['source']}); {env['cores']} cores, "
        f"load {env['loadavg_at_start'][0]:.2f}; {env['dovecot']}"
    )
    start = time.monotonic()
    mail = make_mail(args.changes, args.extra, args.seed)
    octets = sum(len(r) for r in mail.raws)
    log(
        f"generated {len(mail.raws)} messages, {octets / 1e6:.1f} MB, "
        f"in {time.monotonic() - start:.1f} s"
    )
    servers: dict[str, DovecotServer] = {}
    stores = Stores(work, database_url=args.database_url)
    try:
        servers["move"] = DovecotServer().start()
        full = capabilities(servers["move"].add_user("caps", PASSWORD))
        if "MOVE" not in full:
            raise RuntimeError("this Dovecot announces no MOVE")
        if any(op.server == "nomove" for op in operations):
            servers["nomove"] = DovecotServer(
                imap_capability=" ".join(c for c in full if c != "MOVE")
            ).start()
            announced = capabilities(servers["nomove"].add_user("caps", PASSWORD))
            if "MOVE" in announced or "UIDPLUS" not in announced:
                raise RuntimeError(f"the second Dovecot announces {announced}")
        if args.postgres:
            from servers.postgres import PostgresServer

            stores.postgres = PostgresServer().start()
        results["store"] = stores.label
        for rep in range(args.repeat):
            for op in operations:
                log(f"run {rep + 1}/{args.repeat}: {op.title}")
                entry = results["operations"].setdefault(
                    op.key, {"mailfathom": [], **{h: [] for h in op.baselines}}
                )
                sides = ["mailfathom", *op.baselines]
                if rep % 2:
                    sides.reverse()
                for side in sides:
                    server = servers[op.server]
                    if side == "mailfathom":
                        entry[side].append(run_mailfathom(server, stores, op, mail))
                    else:
                        entry[side].append(run_imaplib(server, op, mail, side))
        if args.profile:
            for op in operations:
                log(f"profiled: {op.title}")
                base = RESULTS_DIR / f"mutations-{stamp}-{op.key.replace('+', '-')}"
                results.setdefault("profiled", {})[op.key] = run_mailfathom(
                    servers[op.server], stores, op, mail, profile_base=base
                )
                for phase in ("calls", "convergence"):
                    name = f"{base.name}-{phase}.txt"
                    results["profiles"].append(str((RESULTS_DIR / name).relative_to(REPO)))
    finally:
        for server in servers.values():
            server.stop()
        if stores.postgres is not None:
            stores.postgres.stop()
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    results["wall_s"] = time.monotonic() - wall_start
    results["loadavg_at_end"] = os.getloadavg()
    out = RESULTS_DIR / f"mutations-{stamp}.json"
    out.write_text(json.dumps(results, indent=2, default=str))
    print_report(results, operations)
    print(f"results: {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
