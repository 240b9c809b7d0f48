"""Initial synchronization benchmark: our sync against raw imaplib and mbsync, on one mailbox.

    uv run python bench/initial_sync.py [--messages N] [--repeat R] [--profile | --profile-only]
        [--verification-only | --no-verification]

A private Dovecot is started on loopback and N generated messages (see `mailgen.py`) are
written into its Maildir before Dovecot first looks at it; Dovecot then indexes the folders
and one envelope fetch warms its cache. That load is timed but is not part of any measured
figure. On that one mailbox, one phase after the other (never concurrently: the machine may be
small and shared), each measured phase R times (the median run is reported):

  ours      an initial sync into a fresh SQLite store (Services + run_once) in a child
            process: messages/s, wall and CPU time, and peak memory of the child and every
            process it starts (summed RSS and PSS, sampled every 0.2 s); then interleaved
            pairs of the same sync with the account's contact collection on and off, and
            the ratio (on / off) of their median wall and CPU times
  imaplib   UID FETCH of the same items our sync asks for, BODY.PEEK[] included, in chunks
            of 250 UIDs on one connection: the transfer ceiling for a Python client
  mbsync    isync pulling the mailbox into a Maildir with FSync on
  resync    ours and mbsync again with nothing changed on the server
  postgres  our initial sync into PostgreSQL (a private server with fsync off); skipped with
            --no-postgres or when PostgreSQL is not installed
  verification
            a second mailbox of N messages, DKIM-signed by keys made for the run and published
            by a name server on loopback, synchronized in interleaved pairs with sender
            verification on and off, then with the authorship reading on and off (see
            `trust_cost.py`); run right after ours, skipped with --no-verification (and with
            --ours-only or --profile-only), alone with --verification-only; with --profile it
            adds a sectioned run with each of the two on

--profile (after the above) or --profile-only (instead of the comparisons) adds runs of our
sync into fresh stores: with section timers as configured, a no-change resync with section
timers, with section timers and normalization in process (every step in one thread), and
under pyinstrument both ways. --postgres-sections adds a sectioned run into PostgreSQL.

The code measured is a copy of src/ and tests/ taken at the start (the last commit, or the
work tree with --worktree), so that every phase runs the same code. Results are printed and
written as JSON (profiles as text and HTML) to bench/results/, which git ignores.
"""

from __future__ import annotations

import argparse
import contextlib
import imaplib
import inspect
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
# Every phase runs the same code: a copy of src/ and tests/ taken when the run starts (the
# work tree may change while a long run is going on). Children find it through this variable.
CODE = Path(os.environ.get("MF_BENCH_CODE", REPO))
sys.path[:0] = [str(BENCH_DIR), str(CODE / "tests")]

import mailgen  # noqa: E402
import trust_cost  # noqa: E402
from machine import environment, log, tool_version  # noqa: E402

USER = "bench"
SIGNED_USER = "bench-signed"
PASSWORD = "bench-password"
FETCH_CHUNK = 250  # the chunk size our IMAP session uses
TARGETS = {
    "ours_per_s": 1000.0,
    "ours_over_mbsync": 0.5,
    "resync_ours_over_mbsync": 1.0,
    "peak_rss_mb": 300.0,
    "verification_on_over_off": 1.15,
}
FOLDER_ROLES = {"INBOX": "INBOX", "Sent": "SENT", "Junk": "JUNK", "Archive": "ARCHIVE"}


# --------------------------------------------------------------------------- tools


def ensure_packages() -> None:
    """Install Dovecot and isync from Debian when they are missing (as scripts/test does)."""
    wanted = []
    if not (shutil.which("dovecot") or Path("/usr/sbin/dovecot").exists()):
        wanted.append("dovecot-imapd")
    if not shutil.which("mbsync"):
        wanted.append("isync")
    if not wanted:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    log(f"installing {' '.join(wanted)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Package scripts must not start a system-wide Dovecot.
    policy = Path("/usr/sbin/policy-rc.d")
    created = False
    if not policy.exists() and os.geteuid() == 0:
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
        created = True
    try:
        subprocess.run([*sudo, "apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *wanted],
            check=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    finally:
        if created:
            policy.unlink(missing_ok=True)


def run_measured(args: list[str], **options: Any) -> tuple[int, float, Any]:
    """Run a command; return its exit code, wall seconds and resource usage (wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, **options)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage


# --------------------------------------------------------------------------- mailbox


def load_maildir(
    server: Any,
    count: int,
    seed: int,
    user: str = USER,
    sign: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """Write the generated messages (passed through `sign` if given) straight into the
    user's Maildir, then let Dovecot index them. File names carry S= and W= sizes and the
    mtime is the arrival time, as a delivery agent would leave them."""
    root = server.maildir(user)
    home = server.home(user)
    uid, gid = server.mail_uid, server.mail_gid
    made: dict[str, Path] = {}
    per_folder: dict[str, int] = {}
    octets = 0
    sizes: list[int] = []
    start = time.perf_counter()
    pid = os.getpid()
    generated: Iterable[Any] = mailgen.generate(count, seed=seed)
    for index, message in enumerate(sign(generated) if sign else generated):
        folder = message.folder
        if folder not in made:
            base = root / folder
            for sub in ("cur", "new", "tmp"):
                (base / sub).mkdir(parents=True, exist_ok=True)
            made[folder] = base / "cur"
        raw = message.raw
        when = int(message.received_at.timestamp())
        vsize = len(raw) + raw.count(b"\n")
        name = f"{when}.M{index:07d}P{pid}.bench,S={len(raw)},W={vsize}:2,{message.flags}"
        path = made[folder] / name
        with open(path, "wb") as handle:
            handle.write(raw)
        os.utime(path, (when, when))
        if os.geteuid() == 0:
            os.chown(path, uid, gid)
        per_folder[folder] = per_folder.get(folder, 0) + 1
        octets += len(raw)
        sizes.append(len(raw))
    written = time.perf_counter() - start
    if os.geteuid() == 0:
        for directory in [home, *home.rglob("*")]:
            if directory.is_dir():
                os.chown(directory, uid, gid)
    # Dovecot reads the directories, assigns UIDs and builds its index on first access.
    for folder in per_folder:
        server.doveadm("mailbox", "status", "-u", user, "messages", folder, timeout=1800)
    indexed = time.perf_counter() - start
    sizes.sort()
    return {
        "folders": per_folder,
        "messages": sum(per_folder.values()),
        "octets": octets,
        "mean_octets": octets / max(1, len(sizes)),
        "median_octets": sizes[len(sizes) // 2] if sizes else 0,
        "p95_octets": sizes[int(len(sizes) * 0.95)] if sizes else 0,
        "max_octets": sizes[-1] if sizes else 0,
        "generate_and_write_s": written,
        "dovecot_index_s": indexed - written,
    }


def imap_connect(account: Any) -> imaplib.IMAP4:
    conn = imaplib.IMAP4(account.host, account.port)
    conn.login(account.username, account.password)
    return conn


def uid_ranges(uids: list[int]) -> str:
    ranges = []
    start = prev = uids[0]
    for uid in uids[1:]:
        if uid != prev + 1:
            ranges.append(f"{start}:{prev}" if prev != start else str(start))
            start = uid
        prev = uid
    ranges.append(f"{start}:{prev}" if prev != start else str(start))
    return ",".join(ranges)


def imap_fetch_all(account: Any, folders: list[str], items: str) -> tuple[int, int]:
    """UID FETCH `items` for every message of `folders`; return (responses, literal octets)."""
    conn = imap_connect(account)
    responses = octets = 0
    try:
        for folder in folders:
            typ, _ = conn.select(folder, readonly=True)
            assert typ == "OK", folder
            typ, data = conn.uid("SEARCH", "ALL")
            uids = sorted(int(x) for x in data[0].split()) if data and data[0] else []
            for start in range(0, len(uids), FETCH_CHUNK):
                typ, data = conn.uid("FETCH", uid_ranges(uids[start : start + FETCH_CHUNK]), items)
                assert typ == "OK"
                for entry in data:
                    if isinstance(entry, tuple):
                        responses += 1
                        octets += len(entry[1])
                    elif entry and entry != b")":
                        responses += 1
    finally:
        with contextlib.suppress(Exception):
            conn.logout()
    return responses, octets


# --------------------------------------------------------------------------- phases


def snapshot_code(work: Path, worktree: bool) -> dict[str, Any]:
    """Put a copy of src/ and tests/ aside so that every phase of this run imports the same
    code: the last commit by default, or the work tree as it is now."""
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
    return {
        "snapshot": str(target),
        "source": "work tree" if worktree else "last commit",
        "git_head": head,
        "git_head_subject": git("log", "-1", "--format=%s"),
        "uncommitted_in_src_and_tests": git("status", "--porcelain", "--", "src", "tests"),
    }


def process_tree(root: int) -> list[int]:
    """`root` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry.name}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class TreeSampler:
    """Samples a process and all its descendants, 0.2 s apart (about 1.5 % of one core): the
    largest total RSS and PSS seen, and the CPU time each process had used when last seen
    (the sync's worker processes are not children of the process we wait for, so wait4 does
    not count them)."""

    def __init__(self, root_pid: int, interval: float = 0.2) -> None:
        import threading

        self.root_pid = root_pid
        self.interval = interval
        self.peak_rss_kib = 0
        self.peak_pss_kib = 0
        self.peak_processes = 0
        self.cpu_ticks: dict[int, int] = {}
        self._samples = 0
        self._pids: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        rss = pss = 0
        # Walking /proc costs about 6 ms here; the tree changes rarely, so it is re-read only
        # every fifth sample (memory is read every time, about 0.5 ms per process).
        if self._samples % 5 == 0:
            self._pids = process_tree(self.root_pid)
        self._samples += 1
        pids = self._pids
        for pid in pids:
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                self.cpu_ticks[pid] = int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                continue
        self.peak_rss_kib = max(self.peak_rss_kib, rss)
        self.peak_pss_kib = max(self.peak_pss_kib, pss)
        self.peak_processes = max(self.peak_processes, len(pids))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        ticks = os.sysconf("SC_CLK_TCK")
        return {
            "tree_peak_rss_mb": self.peak_rss_kib / 1024,
            "tree_peak_pss_mb": self.peak_pss_kib / 1024,
            "tree_peak_processes": self.peak_processes,
            "tree_cpu_s": sum(self.cpu_ticks.values()) / ticks,
        }


def run_ours(spec: dict[str, Any], mode: str = "plain") -> dict[str, Any]:
    """Run our sync in a child process (`--child`); return what it reported."""
    out = Path(spec["work"]) / f"result-{uuid.uuid4().hex[:8]}.json"
    child_spec = {**spec, "mode": mode, "out": str(out), "launched_at": time.time()}
    loadavg = os.getloadavg()[0]
    env = {**os.environ, "MF_BENCH_CODE": str(CODE), "PYTHONPATH": str(CODE / "src")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(child_spec)],
        stdout=subprocess.DEVNULL,
        cwd=str(REPO),
        env=env,
    )
    sampler = TreeSampler(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    tree = sampler.stop()
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code != 0 or not out.exists():
        raise RuntimeError(f"our sync failed (exit code {code})")
    result: dict[str, Any] = json.loads(out.read_text())
    result["process_wall_s"] = wall
    result["process_cpu_s"] = usage.ru_utime + usage.ru_stime
    result["maxrss_mb_wait4"] = usage.ru_maxrss / 1024
    result["loadavg_1min_before"] = loadavg
    result.update(tree)
    return result


def write_mbsyncrc(path: Path, account: Any, near: Path) -> None:
    near.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "FSync yes\n\n"
        "IMAPAccount bench\n"
        f"Host {account.host}\nPort {account.port}\n"
        f"User {account.username}\nPass {account.password}\n"
        "SSLType None\nAuthMechs LOGIN\nTimeout 600\n\n"
        "IMAPStore far\nAccount bench\n\n"
        f"MaildirStore near\nPath {near}/\nInbox {near}/INBOX\nSubFolders Verbatim\n\n"
        "Channel bench\nFar :far:\nNear :near:\nPatterns *\n"
        "Create Near\nSync Pull\nSyncState *\n"
    )
    path.chmod(0o600)


def run_mbsync(rc: Path) -> dict[str, Any]:
    loadavg = os.getloadavg()[0]
    code, wall, usage = run_measured(
        ["mbsync", "-c", str(rc), "-q", "-a"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if code != 0:
        raise RuntimeError(f"mbsync failed with exit code {code}")
    return {
        "wall_s": wall,
        "cpu_user_s": usage.ru_utime,
        "cpu_sys_s": usage.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "loadavg_1min_before": loadavg,
    }


def count_maildir(near: Path) -> int:
    return sum(
        1
        for directory in near.rglob("cur")
        for entry in os.scandir(directory)
        if entry.is_file() and not entry.name.startswith(".")
    ) + sum(1 for directory in near.rglob("new") for _ in os.scandir(directory))


def repeated(
    times: int, label: str, action: Callable[[], dict[str, Any]], key: str
) -> dict[str, Any]:
    runs = []
    for attempt in range(times):
        if times > 1:
            log(f"{label}: run {attempt + 1}/{times}")
        runs.append(action())
    best = sorted(runs, key=lambda r: r[key])[len(runs) // 2]  # the median run
    return {**best, "runs": [r[key] for r in runs]} if times > 1 else best


# --------------------------------------------------------------------------- the child


class Sections:
    """Wall time per nested section; exclusive time excludes timed sections inside it.

    Each thread nests its own sections: a section entered on a helper thread (the fetch of
    the next batch) is reported under that thread's name, never inside whatever the main
    thread is doing at the time."""

    def __init__(self) -> None:
        self.inclusive: dict[str, float] = {}
        self.exclusive: dict[str, float] = {}
        self.exclusive_cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.missing: list[str] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def _stack(self) -> list[list[Any]]:
        stack: list[list[Any]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def enter(self, name: str) -> None:
        stack = self._stack()
        if stack:
            path = f"{stack[-1][0]} > {name}"
        elif threading.current_thread() is threading.main_thread():
            path = name
        else:
            path = f"[{threading.current_thread().name.rstrip('_0123456789')}] {name}"
        stack.append([path, time.perf_counter(), 0.0, time.thread_time(), 0.0])

    def leave(self) -> None:
        stack = self._stack()
        path, started, nested, cpu_started, nested_cpu = stack.pop()
        elapsed = time.perf_counter() - started
        cpu = time.thread_time() - cpu_started
        with self._lock:
            self.inclusive[path] = self.inclusive.get(path, 0.0) + elapsed
            self.exclusive[path] = self.exclusive.get(path, 0.0) + elapsed - nested
            self.exclusive_cpu[path] = self.exclusive_cpu.get(path, 0.0) + cpu - nested_cpu
            self.calls[path] = self.calls.get(path, 0) + 1
        if stack:
            stack[-1][2] += elapsed
            stack[-1][4] += cpu

    def wrap(self, name: str, function: Callable[..., Any], *, listed: bool = False) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.enter(name)
            try:
                result = function(*args, **kwargs)
                return list(result) if listed else result
            finally:
                self.leave()

        return timed

    def patch(self, owner: Any, attribute: str, name: str, *, listed: bool = False) -> None:
        """Time `owner.attribute`; a function the code under test no longer has is noted."""
        if not hasattr(owner, attribute):
            self.missing.append(f"{getattr(owner, '__name__', owner)}.{attribute}")
            return
        timed = self.wrap(name, getattr(owner, attribute), listed=listed)
        if isinstance(inspect.getattr_static(owner, attribute), staticmethod):
            timed = staticmethod(timed)
        setattr(owner, attribute, timed)

    def report(self) -> list[dict[str, Any]]:
        return [
            {
                "section": path,
                "calls": self.calls[path],
                "inclusive_s": self.inclusive[path],
                "exclusive_s": self.exclusive[path],
                "exclusive_cpu_s": self.exclusive_cpu[path],
            }
            for path in sorted(self.inclusive)
        ]


def _sql_kind(statement: str) -> str:
    words = statement.split()
    if not words:
        return "?"
    verb = words[0].upper()
    upper = [w.upper() for w in words]
    try:
        if verb == "INSERT":
            return f"INSERT {words[upper.index('INTO') + 1]}"
        if verb == "UPDATE":
            return f"UPDATE {words[1]} SET {words[3] if len(words) > 3 else ''}"
        if verb == "DELETE":
            return f"DELETE {words[upper.index('FROM') + 1]}"
        if verb == "SELECT":
            return f"SELECT FROM {words[upper.index('FROM') + 1]}"
    except (ValueError, IndexError):
        pass
    return " ".join(words[:2])


def instrument(sections: Sections, services: Any) -> list[str]:
    """Put section timers on the parts of one sync pass; return what could not be timed
    (the code under test changes; a missing function is skipped, not an error)."""
    import importlib

    import sqlalchemy as sa

    from mailfathom.adapters.content import packs
    from mailfathom.adapters.imap.session import ImapConnector, ImapSession
    from mailfathom.adapters.mime import normalize, structure
    from mailfathom.adapters.sql import search_index, sync_store, threads
    from mailfathom.app.sync.synchronize_folder import FolderSynchronizer

    def optional(module: str, name: str) -> Any:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            return None

    # The class that hands batches to worker processes has had more than one name.
    handlers = [
        h
        for h in (
            optional("mailfathom.adapters.normalizer", "MimeNormalizer"),
            optional("mailfathom.adapters.preparer", "MimeMessagePreparer"),
        )
        if h is not None
    ]

    sections.patch(FolderSynchronizer, "run", "folder pass")
    sections.patch(FolderSynchronizer, "_new_message", "build NewMessage")
    sections.patch(FolderSynchronizer, "_prepare", "prepare batch")
    sections.patch(FolderSynchronizer, "_commit", "commit batch")
    sections.patch(ImapConnector, "open", "imap connect+login+ENABLE")
    sections.patch(ImapSession, "list_folders", "imap LIST")
    sections.patch(ImapSession, "select", "imap EXAMINE")
    sections.patch(ImapSession, "close", "imap LOGOUT")
    sections.patch(ImapSession, "search_uids", "imap SEARCH")
    sections.patch(ImapSession, "fetch_envelopes", "imap envelopes")
    sections.patch(ImapSession, "fetch_bodies", "imap bodies (item parse)", listed=True)
    sections.patch(ImapSession, "_uid", "imaplib command+read")
    sections.patch(packs.PackContentStore, "put", "content put (one message)")
    sections.patch(packs.PackContentStore, "write_many", "content write_many (hash+lookup)")
    sections.patch(packs.PackContentStore, "_append", "content append")
    sections.patch(packs, "_write_all", "content: pack write")
    sections.patch(os, "fdatasync", "content: pack fdatasync")
    sections.patch(packs.PackContentStore, "_record", "content: index commit")
    for handler in handlers:
        sections.patch(handler, "message", "normalize (other)")
        if not hasattr(handler, "start_batch"):
            continue
        sections.patch(handler, "start_batch", "normalize: start batch")

        def start_timed(self: Any, items: Any, start_batch: Any = handler.start_batch) -> Any:
            future = start_batch(self, items)
            future.result = sections.wrap("normalize: wait for result", future.result)
            return future

        handler.start_batch = start_timed
    if hasattr(normalize, "_normalize_message"):
        sections.patch(normalize, "_normalize_message", "normalize (other)")
    normalize._PARSER.parsebytes = sections.wrap(  # type: ignore[method-assign]
        "parse (email.parser)", normalize._PARSER.parsebytes
    )
    sections.patch(normalize, "parse_fast", "parse (fast route)")
    sections.patch(normalize, "read_header_fields", "header fields")
    sections.patch(normalize, "read_content", "MIME walk + text decode")
    sections.patch(normalize, "parser_defects", "parser defects")
    sections.patch(structure, "html_to_text", "html_to_text (inscriptis)")
    sections.patch(
        sync_store.SqlSyncStore, "add_messages", "store.add_messages (Python/SQLAlchemy)"
    )
    for name in ("message_row", "add_child_rows", "index_document", "keyword_tuples"):
        sections.patch(sync_store, name, f"rows.{name}")
    sections.patch(search_index, "index_documents", "FTS index_documents")
    sections.patch(threads, "place_new_messages", "threading (SQL lookups)")
    sections.patch(threads, "rethread", "rethread (rows + UPDATE)")
    sections.patch(threads, "assemble_conversations", "assemble_conversations")
    trust_step = optional("mailfathom.app.sync.trust_step", "TrustStep")
    if trust_step is not None:
        sections.patch(trust_step, "verify", "sender verification")
        sections.patch(trust_step, "assess", "authorship reading")
        pending = optional("mailfathom.app.sync.trust_step", "PendingTrust")
        sections.patch(pending, "result", "commit: wait for trust readings")
    for name in (
        "stored_uids",
        "record_progress",
        "folder",
        "ensure_folder",
        "ensure_account",
        "awaiting_headroom",
    ):
        sections.patch(sync_store.SqlSyncStore, name, f"store.{name}")

    engine = services.engine

    @sa.event.listens_for(engine, "before_cursor_execute")
    def _before(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        sections.enter(f"SQL {_sql_kind(statement)}")

    @sa.event.listens_for(engine, "after_cursor_execute")
    def _after(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        sections.leave()

    dialect = engine.dialect
    dialect.do_commit = sections.wrap("SQL COMMIT", dialect.do_commit)
    return sections.missing


def trace_memory_at_commits() -> list[Any]:
    """Trace Python allocations and keep a snapshot taken as the largest commit began;
    returns [traced octets, snapshot], filled in as the pass runs."""
    import tracemalloc

    from mailfathom.app.sync.synchronize_folder import FolderSynchronizer

    peak: list[Any] = []
    tracemalloc.start()
    commit = FolderSynchronizer._commit

    def traced_commit(self: Any, *args: Any) -> Any:
        current, _ = tracemalloc.get_traced_memory()
        if not peak or current > peak[0]:
            peak[:] = [current, tracemalloc.take_snapshot()]
        return commit(self, *args)

    FolderSynchronizer._commit = traced_commit  # type: ignore[method-assign, assignment]
    return peak


def steal_seconds() -> float:
    """CPU time the hypervisor gave to others while this machine's CPUs wanted it, summed
    over all CPUs since boot (the `steal` column of /proc/stat)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def process_io() -> dict[str, int]:
    """This process's I/O counters: `wchar` (octets handed to write calls of any kind) and
    `write_bytes` (octets the process caused to be sent to storage)."""
    found: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/io").read_text().splitlines():
            name, _, value = line.partition(":")
            found[name.strip()] = int(value)
    return found


def threads_cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) of each live thread of this process, by thread name."""
    import threading

    tick = os.sysconf("SC_CLK_TCK")
    found: dict[str, float] = {}
    for thread in threading.enumerate():
        try:
            fields = Path(f"/proc/self/task/{thread.native_id}/stat").read_text()
        except OSError:
            continue
        values = fields.rsplit(")", 1)[1].split()
        name = thread.name.split(" ")[0]
        found[name] = found.get(name, 0.0) + (int(values[11]) + int(values[12])) / tick
    return found


def time_collection() -> dict[str, Any]:
    """Time every hand-over of a committed batch to the contact book (choosing the people and
    the store call), where the code measured has one."""
    timing: dict[str, Any] = {"calls": 0, "s": 0.0}
    try:
        import mailfathom.app.sync.synchronize_folder as folder_sync
    except ImportError:
        return timing
    original = getattr(folder_sync, "collect_batch", None)
    if original is None:
        return timing

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            timing["calls"] += 1
            timing["s"] += time.perf_counter() - start

    folder_sync.collect_batch = timed  # type: ignore[attr-defined]
    return timing


def child_main(spec: dict[str, Any]) -> None:
    imported_at = time.time()
    from mailfathom.bootstrap import Services
    from mailfathom.domain.config import FolderMapping
    from mailfathom.domain.folders import FolderRole
    from servers.dovecot import ImapAccount
    from sync.helpers import deployment, imap_account_config

    started = time.perf_counter()
    account = imap_account_config(
        ImapAccount(spec["host"], spec["port"], spec["user"], spec["password"]),
        folders=[
            FolderMapping(name, name, getattr(FolderRole, FOLDER_ROLES.get(name, "ALL")))
            for name in spec["folders"]
        ],
        account_id=spec["account_id"],
        collect_contacts=spec.get("collect_contacts", True),
    )
    config = deployment(Path(spec["store_dir"]), account, spec.get("database_url"))
    services = Services.open(trust_cost.configured(config, spec))
    if spec.get("sqlite_cache_kib") and services.engine.dialect.name == "sqlite":
        # Experiment: a smaller SQLite page cache than the project's setting, applied after
        # the project's own connect hook on every new connection.
        import sqlalchemy as sa

        services.engine.dispose()
        pragma = f"PRAGMA cache_size=-{int(spec['sqlite_cache_kib'])}"

        @sa.event.listens_for(services.engine, "connect")
        def _cache(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.execute(pragma)

    opened = time.perf_counter()
    # The part that hands batches to worker processes (its name has changed over time).
    handler = getattr(services, "preparer", None) or getattr(services, "normalizer", None)
    if spec.get("normalizer_workers") is not None and handler is not None:
        handler.close()
        handler._workers = spec["normalizer_workers"]
    workers = getattr(handler, "_workers", None)
    if spec.get("batches_in_flight"):
        import dataclasses

        made = services.folder_synchronizer

        def with_depth(account: Any, made: Any = made) -> Any:
            synchronizer = made(account)
            synchronizer._limits = dataclasses.replace(
                synchronizer._limits, batches_in_flight=spec["batches_in_flight"]
            )
            return synchronizer

        services.folder_synchronizer = with_depth  # type: ignore[method-assign]
    collection = time_collection()
    verification = trust_cost.time_verification()
    verifying_pool = None
    if spec.get("verify_processes") and services.sender_verifier is not None:
        verifying_pool = trust_cost.verify_in_processes(
            spec["verify_processes"], services.config.sender_verification
        )
    sections = Sections() if spec["mode"] == "breakdown" else None
    not_timed = instrument(sections, services) if sections else []
    profiler = None
    if spec["mode"] == "pyinstrument":
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.001)
        profiler.start()
    cprofile = None
    if spec["mode"] == "cprofile":
        import cProfile

        cprofile = cProfile.Profile()
        cprofile.enable()
    memory_peak: list[Any] = []
    if spec["mode"] == "memory":
        memory_peak = trace_memory_at_commits()
    usage_before = resource.getrusage(resource.RUSAGE_SELF)
    io_before = process_io()
    steal_before = steal_seconds()
    sync_start = time.perf_counter()
    if sections:
        sections.enter("run_once")
    report = services.account_synchronizer().run_once(account)
    if sections:
        sections.leave()
    sync_wall = time.perf_counter() - sync_start
    command_s = time.time() - spec["launched_at"]
    usage_after = resource.getrusage(resource.RUSAGE_SELF)
    # Worker processes (normalization) start during the pass and live until close().
    helpers_cpu = sum(cpu_seconds(pid) for pid in process_tree(os.getpid())[1:])
    vm_hwm_kib = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            vm_hwm_kib = int(line.split()[1])
    pool_status = services.engine.pool.status()
    thread_cpu = threads_cpu_seconds()
    steal = steal_seconds() - steal_before
    io_after = process_io()
    io_written = {k: io_after.get(k, 0) - io_before.get(k, 0) for k in io_after}
    if profiler:
        profiler.stop()
        base = Path(spec["profile_base"])
        base.with_suffix(".txt").write_text(
            profiler.output_text(unicode=False, color=False, show_all=False)
        )
        base.with_suffix(".html").write_text(profiler.output_html())
    if memory_peak:
        import tracemalloc

        traced, snapshot = memory_peak[0], memory_peak[1]
        lines = [f"traced Python memory at its highest commit: {traced / 1e6:.1f} MB"]
        for stat in snapshot.statistics("lineno")[:25]:
            lines.append(f"{stat.size / 1e6:8.2f} MB {stat.count:8d} blocks  {stat.traceback}")
        Path(spec["profile_base"]).with_suffix(".memory.txt").write_text("\n".join(lines))
        tracemalloc.stop()
    if cprofile:
        import pstats

        cprofile.disable()
        base = Path(spec["profile_base"])
        cprofile.dump_stats(str(base.with_suffix(".pstats")))
        with base.with_suffix(".cprofile.txt").open("w") as handle:
            stats = pstats.Stats(cprofile, stream=handle)
            stats.sort_stats("tottime").print_stats(60)
            stats.sort_stats("cumulative").print_stats(60)

    import sqlalchemy as sa

    backfill: dict[str, Any] = {}
    if spec.get("backfill"):
        # What the pass left without readings (its inline share spent), read after it as a
        # one-off `mailfathom sync` does: timed apart from the pass.
        with services.engine.connect() as c:
            inline = trust_cost.stored_readings(c)
        backfill_start = time.perf_counter()
        backfill_cpu = time.process_time()
        read = services.trust_backfill().run_until_done(account)
        backfill = {
            "inline_readings": inline,
            "backfilled": read,
            "backfill_wall_s": time.perf_counter() - backfill_start,
            "backfill_cpu_s": time.process_time() - backfill_cpu,
        }

    with services.engine.connect() as c:
        stored = c.execute(sa.text("SELECT count(*) FROM messages")).scalar_one()
        threads_n = c.execute(
            sa.text("SELECT count(DISTINCT thread_id) FROM messages")
        ).scalar_one()
        largest = c.execute(
            sa.text(
                "SELECT max(n) FROM (SELECT count(*) AS n FROM messages GROUP BY thread_id) AS t"
            )
        ).scalar_one()
        contacts_n = c.execute(sa.text("SELECT count(*) FROM contacts")).scalar_one()
        readings = trust_cost.stored_readings(c)
        if services.engine.dialect.name == "sqlite":
            indexed = c.execute(sa.text("SELECT count(*) FROM message_fts")).scalar_one()
            database_octets = sum(
                p.stat().st_size
                for p in Path(spec["store_dir"], "data").glob("mailfathom.sqlite3*")
            )
        else:
            indexed = c.execute(sa.text("SELECT count(*) FROM message_search")).scalar_one()
            database_octets = c.execute(
                sa.text("SELECT pg_database_size(current_database())")
            ).scalar_one()
    services.close()
    if verifying_pool is not None:
        verifying_pool.shutdown()
    content_octets = 0
    for directory, _dirs, names in os.walk(Path(spec["store_dir"], "data", "content")):
        content_octets += sum(os.stat(os.path.join(directory, n)).st_size for n in names)
    result = {
        "mode": spec["mode"],
        "start_up_s": imported_at - spec["launched_at"],
        "sync_wall_s": sync_wall,
        "command_s": command_s,
        "open_s": opened - started,
        "cpu_user_s": usage_after.ru_utime - usage_before.ru_utime,
        "cpu_sys_s": usage_after.ru_stime - usage_before.ru_stime,
        "helper_processes_cpu_s": helpers_cpu,
        "stored_now": stored,
        **backfill,
        "indexed_now": indexed,
        "conversations": threads_n,
        "largest_conversation": largest,
        "contacts_now": contacts_n,
        "collection_calls": collection["calls"],
        "collection_s": collection["s"],
        "verification": verification,
        "readings": readings,
        "stored_this_pass": sum(f.stored for f in report.folders),
        "fetched_bodies": sum(f.fetched_bodies for f in report.folders),
        "vm_hwm_mb": vm_hwm_kib / 1024,
        "pool_status": pool_status,
        "normalizer_workers": workers,
        "not_timed": not_timed,
        "sqlite_cache_kib_override": spec.get("sqlite_cache_kib"),
        "content_octets": content_octets,
        "database_octets": database_octets,
        "thread_cpu_s": thread_cpu,
        "main_process_io": io_written,
        "host_steal_s": steal,
    }
    if sections:
        result["sections"] = sections.report()
    Path(spec["out"]).write_text(json.dumps(result))


def compare_collection(pairs: int, fresh_store: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """Initial syncs into fresh stores with the account's contact collection on and off, in
    interleaved pairs (the first of a pair alternating), so that drift in the machine's load
    falls on both alike. Reports the median of each and the ratio of the medians."""
    runs: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for pair in range(pairs):
        for collect in (True, False) if pair % 2 == 0 else (False, True):
            label = "on" if collect else "off"
            log(f"ours: initial sync, contact collection {label} (pair {pair + 1}/{pairs})")
            r = run_ours({**fresh_store(f"collect-{label}"), "collect_contacts": collect})
            log(f"ours (collection {label}): {r['sync_wall_s']:.2f} s")
            runs[collect].append(r)
    if any(r["contacts_now"] for r in runs[False]):
        raise RuntimeError("a sync with collection off collected contacts")

    def median(collect: bool, key: str) -> float:
        values = sorted(phase_cpu(r) if key == "cpu" else r[key] for r in runs[collect])
        return values[len(values) // 2]

    on_s, off_s = median(True, "sync_wall_s"), median(False, "sync_wall_s")
    inside = sorted(r["collection_s"] / r["sync_wall_s"] for r in runs[True])
    on_cpu, off_cpu = median(True, "cpu"), median(False, "cpu")
    off_runs = sorted(runs[False], key=lambda r: r["sync_wall_s"])
    return {
        "pairs": pairs,
        "on_sync_wall_s": on_s,
        "off_sync_wall_s": off_s,
        "on_over_off": on_s / off_s if off_s > 0 else float("nan"),
        "on_cpu_s": on_cpu,
        "off_cpu_s": off_cpu,
        "cpu_on_over_off": on_cpu / off_cpu if off_cpu > 0 else float("nan"),
        "on_runs_s": [r["sync_wall_s"] for r in runs[True]],
        "off_runs_s": [r["sync_wall_s"] for r in runs[False]],
        "contacts_collected": runs[True][0]["contacts_now"],
        "collection_calls": runs[True][0]["collection_calls"],
        "collection_share_of_wall": inside[len(inside) // 2],
        "off_median_run": off_runs[len(off_runs) // 2],
    }


def verification_phase(
    server: Any, args: argparse.Namespace, work: Path, options: dict[str, Any]
) -> dict[str, Any]:
    """The verification phase (see `trust_cost.py`): a mailbox of its own, signed; a name
    server on loopback publishing the keys; interleaved pairs with sender verification on and
    off (the authorship reading off in both), then with the authorship reading on and off
    (verification off in both)."""
    from servers.dns import DnsServer

    account = server.add_user(SIGNED_USER, PASSWORD)
    domains = {address.rpartition("@")[2] for _, address in [*mailgen.PEOPLE, mailgen.ME]}
    signed = trust_cost.SignedMailbox(args.seed + 1, domains)
    log(f"verification: loading {args.messages} signed messages")
    mailbox = load_maildir(server, args.messages, args.seed, user=SIGNED_USER, sign=signed.sign)
    folders = sorted(mailbox["folders"], key=lambda f: (f != "INBOX", f))
    imap_fetch_all(account, folders, "(UID RFC822.SIZE FLAGS INTERNALDATE MODSEQ)")
    n = mailbox["messages"]
    mailbox.update(signing_s=signed.signing_s, mix=dict(signed.kinds))
    log(f"verification: signed in {signed.signing_s:.1f} s: {dict(signed.kinds)}")
    pairs = max(3, args.repeat)
    names = signed.names()
    dns = DnsServer().start()
    try:
        trust_cost.publish(dns, signed)

        def run(label: str, verify: bool, assess: bool, mode: str = "plain") -> dict[str, Any]:
            store_dir = work / f"store-{label}-{uuid.uuid4().hex[:6]}"
            store_dir.mkdir()
            before = trust_cost.questions(dns, names)
            r = run_ours(
                {
                    "host": account.host,
                    "port": account.port,
                    "user": SIGNED_USER,
                    "password": PASSWORD,
                    "folders": folders,
                    "work": str(work),
                    "store_dir": str(store_dir),
                    "account_id": f"bench-{label}",
                    "sections": trust_cost.sections(verify, assess, dns.address),
                    "backfill": True,
                    **options,
                },
                mode=mode,
            )
            after = trust_cost.questions(dns, names)
            r["dns_questions"] = {name: after[name] - before[name] for name in names}
            if r["stored_now"] != n:
                raise RuntimeError(f"our store holds {r['stored_now']} of {n} messages")
            return r

        verification = trust_cost.compare_switch(
            pairs, "sender verification", lambda on: run("verify", on, False)
        )
        trust_cost.check_verdicts(verification, signed, n)
        authorship = trust_cost.compare_switch(
            pairs, "machine authorship", lambda on: run("authorship", False, on)
        )
        trust_cost.check_readings(authorship, n)
        sectioned = {}
        if args.profile or args.profile_only:
            log("ours: sectioned run, sender verification on")
            sectioned["sender_verification_sectioned"] = run(
                "verify-sections", True, False, mode="breakdown"
            )
            log("ours: sectioned run, machine authorship on")
            sectioned["machine_authorship_sectioned"] = run(
                "authorship-sections", False, True, mode="breakdown"
            )
    finally:
        dns.stop()
    return {
        **sectioned,
        "verification_mailbox": mailbox,
        "sender_verification": {
            **trust_cost.summary(verification, n),
            "mix": dict(signed.kinds),
            "published_keys": len(signed.signers.keys),
            "distinct_selectors": len(signed.used),
        },
        "machine_authorship": trust_cost.summary(authorship, n, "authorship"),
    }


def phase_cpu(phase: dict[str, Any]) -> float:
    """CPU seconds of our sync's own process and its helper processes."""
    return float(
        sum(phase.get(k, 0.0) for k in ("cpu_user_s", "cpu_sys_s", "helper_processes_cpu_s"))
    )


# --------------------------------------------------------------------------- report


def per_s(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def print_table(results: dict[str, Any]) -> None:
    n = results["mailbox"]["messages"]
    mb = results["mailbox"]["octets"] / 1e6
    rows: list[tuple[str, str, str, str, str, str]] = []

    def add(label: str, phase: dict[str, Any] | None, wall_key: str, rss: float | None) -> None:
        if not phase:
            return
        seconds = phase[wall_key]
        cpu = sum(phase.get(k, 0.0) for k in ("cpu_user_s", "cpu_sys_s", "helper_processes_cpu_s"))
        rows.append(
            (
                label,
                f"{seconds:9.2f}",
                f"{per_s(n, seconds):9.0f}",
                f"{per_s(mb, seconds):7.1f}",
                f"{cpu:8.2f}",
                f"{rss:8.0f}" if rss is not None else f"{'':8}",
            )
        )

    ours = results.get("ours")
    add(
        "ours: initial sync, SQLite (run_once)",
        ours,
        "sync_wall_s",
        ours and ours["tree_peak_rss_mb"],
    )
    add("imaplib: UID FETCH BODY.PEEK[] (ceiling)", results.get("imaplib"), "wall_s", None)
    mbs = results.get("mbsync")
    add("mbsync: Maildir, FSync yes", mbs, "wall_s", mbs and mbs["maxrss_mb"])
    pg = results.get("ours_postgres")
    add("ours: initial sync, PostgreSQL", pg, "sync_wall_s", pg and pg["tree_peak_rss_mb"])
    add(
        "ours: initial sync, SQLite, collection off",
        results.get("ours_no_collection"),
        "sync_wall_s",
        results.get("ours_no_collection", {}).get("tree_peak_rss_mb"),
    )
    print()
    print(f"{n} messages, {mb:.1f} MB  ({results['mailbox']['folders']})")
    print(f"{'phase':44} {'wall s':>9} {'msg/s':>9} {'MB/s':>7} {'CPU s':>8} {'RSS MB':>8}")
    for label, seconds, rate, mbps, cpu, rss in rows:
        print(f"{label:44} {seconds} {rate} {mbps} {cpu} {rss}")
    collection = results.get("contact_collection")
    if collection:
        print(
            f"  contact collection: on {collection['on_sync_wall_s']:.2f} s / off "
            f"{collection['off_sync_wall_s']:.2f} s = {collection['on_over_off']:.3f} wall time "
            f"(on / off, medians of {collection['pairs']} interleaved pairs); CPU "
            f"{collection['cpu_on_over_off']:.3f}; {collection['contacts_collected']} contacts "
            f"collected; timed inside collection: "
            f"{100 * collection['collection_share_of_wall']:.2f} % of the pass's wall time "
            f"({collection['collection_calls']} batches)"
        )
    trust_cost.print_lines(results)
    if ours:
        print(
            f"  ours: CPU is the sync's own process plus its helper processes "
            f"({ours['helper_processes_cpu_s']:.1f} s of it); "
            f"RSS is the sum over its {ours['tree_peak_processes']} processes "
            f"(PSS {ours['tree_peak_pss_mb']:.0f} MB, "
            f"main process alone {ours['vm_hwm_mb']:.0f} MB)"
        )
        if "host_steal_s" in ours:
            print(
                f"  ours: CPU time the host withheld from this machine during the pass "
                f"(steal, both CPUs): {ours['host_steal_s']:.2f} s"
            )
    resync = results.get("resync")
    if resync:
        print(
            f"{'resync, no change: ours run_once':44} {resync['ours_sync_wall_s']:9.3f}"
            f"   (process start to end of run_once {resync['ours_command_s']:.2f} s)"
        )
        print(f"{'resync, no change: mbsync':44} {resync['mbsync_wall_s']:9.3f}")
    print()
    print(f"{'check':44} {'value':>9} {'target':>9}  ok")
    for name, value, target, ok in results["checks"]:
        print(f"{name:44} {value:9.2f} {target:>9}  {'yes' if ok else 'NO'}")
    print()


def checks(results: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    n = results["mailbox"]["messages"]
    out: list[tuple[str, float, str, bool]] = []
    verification = results.get("sender_verification")
    if verification:
        ratio = verification["on_over_off"]
        target = TARGETS["verification_on_over_off"]
        out.append(("sender verification on / off, wall", ratio, f"< {target}", ratio < target))
        out.append(
            ("sender verification on / off, CPU", verification["cpu_on_over_off"], "(info)", True)
        )
    authorship = results.get("machine_authorship")
    if authorship:
        out.append(("machine authorship on / off, wall", authorship["on_over_off"], "(info)", True))
        out.append(
            ("machine authorship on / off, CPU", authorship["cpu_on_over_off"], "(info)", True)
        )
    ours = results.get("ours")
    if not ours:
        return out
    rate = per_s(n, ours["sync_wall_s"])
    out.append(("ours msg/s (absolute)", rate, ">= 1000", rate >= TARGETS["ours_per_s"]))
    if "imaplib" in results:
        ratio = ours["sync_wall_s"] and results["imaplib"]["wall_s"] / ours["sync_wall_s"]
        out.append(("throughput ours / imaplib", ratio, "(info)", True))
    if "mbsync" in results:
        ratio = results["mbsync"]["wall_s"] / ours["sync_wall_s"]
        out.append(("throughput ours / mbsync", ratio, ">= 0.5", ratio >= 0.5))
    resync = results.get("resync")
    if resync:
        ratio = resync["ours_sync_wall_s"] / resync["mbsync_wall_s"]
        out.append(("resync time ours / mbsync (run_once)", ratio, "<= 1.0", ratio <= 1.0))
        ratio = resync["ours_command_s"] / resync["mbsync_wall_s"]
        out.append(("resync time ours / mbsync (whole process)", ratio, "(info)", True))
    rss = ours["tree_peak_rss_mb"]
    out.append(("peak RSS ours, all processes, MB", rss, "< 300", rss < 300))
    out.append(("peak PSS ours, all processes, MB", ours["tree_peak_pss_mb"], "(info)", True))
    if "ours_postgres" in results:
        rate = per_s(n, results["ours_postgres"]["sync_wall_s"])
        out.append(("ours msg/s on PostgreSQL", rate, "(info)", True))
    return out


def print_sections(result: dict[str, Any], messages: int) -> None:
    total = result["sync_wall_s"]
    cpu = result["cpu_user_s"] + result["cpu_sys_s"]
    print(
        f"\nwhere the time goes ({messages} messages, run_once {total:.2f} s wall, "
        f"{cpu:.2f} s CPU; exclusive of nested sections):"
    )
    print(f"  {'wall%':>6} {'wall s':>8} {'ms/msg':>7} {'CPU s':>8} {'calls':>7}  section")
    # The synchronizing thread's sections, then each helper thread's: those ran at the same
    # time as the first, so their shares add to the wall time rather than divide it.
    for helpers in (False, True):
        rows = sorted(
            (
                r
                for r in result["sections"]
                if (
                    r["section"].startswith("[") if helpers else r["section"].startswith("run_once")
                )
            ),
            key=lambda r: -r["exclusive_s"],
        )
        if helpers and rows:
            print("  on helper threads, at the same time as the above:")
        for row in rows:
            if row["exclusive_s"] < 0.002 * total:
                continue
            share = 100 * row["exclusive_s"] / total
            per_msg = 1000 * row["exclusive_s"] / max(1, messages)
            print(
                f"  {share:5.1f}% {row['exclusive_s']:8.2f} {per_msg:7.3f} "
                f"{row['exclusive_cpu_s']:8.2f} {row['calls']:7d}  {row['section']}"
            )
    by_thread = result.get("thread_cpu_s") or {}
    if by_thread:
        listed = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in by_thread.items())
        print(f"  CPU by live thread at the end of the pass: {listed}")
    written = result.get("main_process_io") or {}
    if written:
        print(
            f"  main process during the pass: {written.get('wchar', 0) / 1e6:.0f} MB handed to "
            f"write calls, {written.get('write_bytes', 0) / 1e6:.0f} MB sent to storage"
        )


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="runs per measured phase (median)")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL phase")
    parser.add_argument("--profile", action="store_true", help="also profile our sync")
    parser.add_argument(
        "--profile-only", action="store_true", help="only our sync: timed, sectioned, profiled"
    )
    parser.add_argument(
        "--sqlite-cache-kib",
        type=int,
        help="experiment: override the SQLite page cache size (KiB) of our sync",
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="experiment: worker processes of our sync (default: the product's choice)",
    )
    parser.add_argument(
        "--in-flight",
        type=int,
        help="experiment: batches in flight in our sync (default: the product's choice)",
    )
    parser.add_argument(
        "--worktree",
        action="store_true",
        help="measure src/ as it is in the work tree (default: as of the last commit)",
    )
    parser.add_argument("--ours-only", action="store_true", help="only our sync, plain")
    parser.add_argument(
        "--verification-only",
        action="store_true",
        help="only the verification phase: sender verification and authorship on vs off",
    )
    parser.add_argument(
        "--no-verification", action="store_true", help="skip the verification phase"
    )
    parser.add_argument(
        "--verify-processes",
        type=int,
        help="experiment: sender verification in N worker processes instead of threads",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="also a run of our sync that traces Python allocations (top sites at the peak)",
    )
    parser.add_argument(
        "--postgres-sections",
        action="store_true",
        help="also a sectioned run of our sync into PostgreSQL",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument(
        "--dir", default="/var/tmp", help="where the scratch directory is made (default /var/tmp)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(json.loads(args.child))
        return 0

    ensure_packages()
    global CODE
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mailfathom-bench-", dir=args.dir))
    code = snapshot_code(work, args.worktree)
    CODE = Path(code["snapshot"])
    sys.path[:0] = [str(CODE / "tests"), str(CODE / "src")]
    from servers.dovecot import DovecotServer

    results: dict[str, Any] = {
        "benchmark": "initial_sync",
        "started_at": stamp,
        "command": " ".join(["uv run python bench/initial_sync.py", *sys.argv[1:]]),
        "code": code,
        "environment": environment(
            {"dovecot": ["dovecot", "--version"], "mbsync": ["mbsync", "--version"]}
        ),
        "work_dir_filesystem": tool_version(["df", "-T", str(work)]),
    }
    log(f"code: {code['git_head'][:10]} {code['git_head_subject']!r} ({code['source']})")
    if code["uncommitted_in_src_and_tests"] and args.worktree:
        log("code: with uncommitted changes in src/ or tests/ (copied as they are now)")
    server = DovecotServer()
    postgres = None
    options = {
        "verify_processes": args.verify_processes,
        "sqlite_cache_kib": args.sqlite_cache_kib,
        "normalizer_workers": args.workers,
        "batches_in_flight": args.in_flight,
    }
    try:
        server.start()
        if args.verification_only:
            results.update(verification_phase(server, args, work, options))
            results["mailbox"] = results["verification_mailbox"]
        else:
            account = server.add_user(USER, PASSWORD)
            log(f"dovecot on {account.host}:{account.port}; loading {args.messages} messages")
            mailbox = load_maildir(server, args.messages, args.seed)
            folders = sorted(mailbox["folders"], key=lambda f: (f != "INBOX", f))
            # Every client then finds the same warm Dovecot index and cache and the message
            # files in the page cache; this is part of loading, not of any measurement.
            start = time.perf_counter()
            responses, _ = imap_fetch_all(
                account, folders, "(UID RFC822.SIZE FLAGS INTERNALDATE MODSEQ)"
            )
            mailbox["warm_up_s"] = time.perf_counter() - start
            assert responses == mailbox["messages"], (responses, mailbox["messages"])
            results["mailbox"] = mailbox
            log(
                f"loaded {mailbox['messages']} messages, {mailbox['octets'] / 1e6:.1f} MB: "
                f"generate+write {mailbox['generate_and_write_s']:.1f} s, dovecot index "
                f"{mailbox['dovecot_index_s']:.1f} s, warm-up {mailbox['warm_up_s']:.1f} s"
            )
            spec = {
                "host": account.host,
                "port": account.port,
                "user": USER,
                "password": PASSWORD,
                "folders": folders,
                "work": str(work),
            }

            def fresh_store(label: str) -> dict[str, Any]:
                store_dir = work / f"store-{label}-{uuid.uuid4().hex[:6]}"
                store_dir.mkdir()
                return {
                    **spec,
                    "store_dir": str(store_dir),
                    "account_id": f"bench-{label}",
                    "sqlite_cache_kib": args.sqlite_cache_kib,
                    "normalizer_workers": args.workers,
                    "batches_in_flight": args.in_flight,
                }

            ours_spec: dict[str, Any] = {}

            def ours_once() -> dict[str, Any]:
                ours_spec.clear()
                ours_spec.update(fresh_store("ours"))
                log("ours: initial sync into SQLite")
                r = run_ours(ours_spec)
                r["store_dir"] = ours_spec["store_dir"]
                log(f"ours: {r['sync_wall_s']:.2f} s, peak RSS {r['vm_hwm_mb']:.0f} MB")
                return r

            results["ours"] = repeated(args.repeat, "ours", ours_once, "sync_wall_s")
            results["ours"]["messages_per_s"] = per_s(
                mailbox["messages"], results["ours"]["sync_wall_s"]
            )
            if results["ours"]["stored_now"] != mailbox["messages"]:
                raise RuntimeError(f"our store holds {results['ours']['stored_now']} messages")
            ours_spec["store_dir"] = results["ours"]["store_dir"]

            if not args.profile_only:
                results["contact_collection"] = compare_collection(max(3, args.repeat), fresh_store)
                results["ours_no_collection"] = results["contact_collection"].pop("off_median_run")
            if not (args.profile_only or args.ours_only or args.no_verification):
                results.update(verification_phase(server, args, work, options))

            if not (args.profile_only or args.ours_only):

                def imap_once() -> dict[str, Any]:
                    log("imaplib: UID FETCH BODY.PEEK[]")
                    loadavg = os.getloadavg()[0]
                    before = resource.getrusage(resource.RUSAGE_SELF)
                    t0 = time.perf_counter()
                    got, octets = imap_fetch_all(
                        account,
                        folders,
                        "(UID RFC822.SIZE FLAGS INTERNALDATE MODSEQ BODY.PEEK[])",
                    )
                    wall = time.perf_counter() - t0
                    after = resource.getrusage(resource.RUSAGE_SELF)
                    assert got == mailbox["messages"], got
                    log(f"imaplib: {wall:.2f} s")
                    return {
                        "wall_s": wall,
                        "octets": octets,
                        "cpu_user_s": after.ru_utime - before.ru_utime,
                        "cpu_sys_s": after.ru_stime - before.ru_stime,
                        "loadavg_1min_before": loadavg,
                    }

                results["imaplib"] = repeated(args.repeat, "imaplib", imap_once, "wall_s")
                results["imaplib"]["messages_per_s"] = per_s(
                    mailbox["messages"], results["imaplib"]["wall_s"]
                )

                mbsync_dirs: dict[str, Path] = {}

                def mbsync_once() -> dict[str, Any]:
                    base = work / f"mbsync-{uuid.uuid4().hex[:6]}"
                    base.mkdir()
                    rc = base / "mbsyncrc"
                    write_mbsyncrc(rc, account, base / "Mail")
                    mbsync_dirs.update(rc=rc, near=base / "Mail")
                    log("mbsync: initial pull")
                    r = run_mbsync(rc)
                    got = count_maildir(base / "Mail")
                    if got != mailbox["messages"]:
                        raise RuntimeError(f"mbsync stored {got} messages")
                    log(f"mbsync: {r['wall_s']:.2f} s")
                    return r

                results["mbsync"] = repeated(args.repeat, "mbsync", mbsync_once, "wall_s")
                results["mbsync"]["messages_per_s"] = per_s(
                    mailbox["messages"], results["mbsync"]["wall_s"]
                )

                log("resync (no change): ours, then mbsync")
                ours_runs = [run_ours(ours_spec) for _ in range(max(1, args.repeat))]
                again = sorted(ours_runs, key=lambda r: r["sync_wall_s"])[len(ours_runs) // 2]
                if again["fetched_bodies"] != 0:
                    raise RuntimeError("the no-change resync fetched bodies")
                mbsync_runs = [run_mbsync(mbsync_dirs["rc"]) for _ in range(max(1, args.repeat))]
                mb_again = sorted(mbsync_runs, key=lambda r: r["wall_s"])[len(mbsync_runs) // 2]
                results["resync"] = {
                    "ours_sync_wall_s": again["sync_wall_s"],
                    "ours_process_wall_s": again["process_wall_s"],
                    "ours_command_s": again["command_s"],
                    "loadavg_1min_before": again["loadavg_1min_before"],
                    "ours_open_s": again["open_s"],
                    "ours_peak_rss_mb": again["vm_hwm_mb"],
                    "mbsync_wall_s": mb_again["wall_s"],
                    "ours_runs": [r["sync_wall_s"] for r in ours_runs],
                    "mbsync_runs": [r["wall_s"] for r in mbsync_runs],
                }

                if not args.no_postgres:
                    try:
                        from servers.postgres import PostgresServer

                        postgres = PostgresServer().start()
                    except Exception as exc:
                        log(f"postgres: skipped ({str(exc).splitlines()[0]})")
                        postgres = None
                    if postgres is not None:
                        url = postgres.create_database("bench")
                        log("ours: initial sync into PostgreSQL")
                        pg = run_ours({**fresh_store("pg"), "database_url": url})
                        pg["messages_per_s"] = per_s(mailbox["messages"], pg["sync_wall_s"])
                        pg["note"] = "PostgreSQL test server runs with fsync=off"
                        results["ours_postgres"] = pg
                        log(f"postgres: {pg['sync_wall_s']:.2f} s")

            if args.postgres_sections:
                from servers.postgres import PostgresServer

                if postgres is None:
                    postgres = PostgresServer().start()
                url = postgres.create_database("bench_sections")
                log("ours: sectioned run into PostgreSQL")
                results["ours_postgres_sectioned"] = run_ours(
                    {**fresh_store("pg-sections"), "database_url": url}, mode="breakdown"
                )

            if args.memory:
                base = RESULTS_DIR / f"initial_sync-{stamp}-memory"
                log("ours: run with traced allocations")
                run_ours({**fresh_store("memory"), "profile_base": str(base)}, mode="memory")
                log(f"memory: {base.with_suffix('.memory.txt').relative_to(REPO)}")

            if args.profile or args.profile_only:
                # As configured (normalization in worker processes where the code does that):
                # where the synchronizing thread spends or waits its time.
                log("ours: sectioned run")
                sectioned_spec = fresh_store("sections")
                results["ours_sectioned"] = run_ours(sectioned_spec, mode="breakdown")
                log("ours: sectioned no-change resync")
                results["ours_sectioned_resync"] = run_ours(sectioned_spec, mode="breakdown")
                # Everything in one thread: the cost of every step, normalization included.
                log("ours: sectioned run, normalization in process")
                results["ours_sectioned_serial"] = run_ours(
                    {**fresh_store("serial"), "normalizer_workers": 0}, mode="breakdown"
                )
                for label, workers in (("serial", 0), ("default", None)):
                    base = RESULTS_DIR / f"initial_sync-{stamp}-pyinstrument-{label}"
                    log(f"ours: pyinstrument run ({label})")
                    profiled = run_ours(
                        {
                            **fresh_store(f"profile-{label}"),
                            "profile_base": str(base),
                            "normalizer_workers": workers,
                        },
                        mode="pyinstrument",
                    )
                    results[f"ours_pyinstrument_{label}"] = {
                        "sync_wall_s": profiled["sync_wall_s"],
                        "profile_text": str(base.with_suffix(".txt").relative_to(REPO)),
                        "profile_html": str(base.with_suffix(".html").relative_to(REPO)),
                    }
    finally:
        if postgres is not None:
            postgres.stop()
        server.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work}")

    results["checks"] = checks(results)
    results["finished_at"] = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    results["loadavg_at_end"] = os.getloadavg()
    out = RESULTS_DIR / f"initial_sync-{stamp}.json"
    out.write_text(json.dumps(results, indent=2, default=str))
    print_table(results)
    if "ours_sectioned" in results:
        n = results["mailbox"]["messages"]
        print("\nas configured:", end="")
        print_sections(results["ours_sectioned"], n)
        print("\nnormalization in process (every step in one thread):", end="")
        print_sections(results["ours_sectioned_serial"], n)
        print("\nno-change resync:", end="")
        print_sections(results["ours_sectioned_resync"], n)
    for key, title in (
        ("sender_verification_sectioned", "sender verification on"),
        ("machine_authorship_sectioned", "machine authorship on"),
    ):
        if key in results:
            print(f"\n{title}, as configured:", end="")
            print_sections(results[key], results["verification_mailbox"]["messages"])
    if "ours_postgres_sectioned" in results:
        print("\nPostgreSQL, as configured:", end="")
        print_sections(results["ours_postgres_sectioned"], results["mailbox"]["messages"])
    print(f"\nresults: {out.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
