"""Pieces of the read-latency benchmark (`read_latency.py`) that are not about measuring:
the code snapshot, the machine, the corpus on disk, the notmuch database, the server process
and the arithmetic of percentiles."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
ACCOUNT_ID = "bench"
OWNER = "owner@example.org"
FOLDER_ROLES = {"INBOX": "Inbox", "Sent": "Sent", "Archive": "Archive", "Junk": "Junk"}
# Files our Maildir bookkeeping leaves beside cur/new/tmp; notmuch must not try to index them.
NOTMUCH_IGNORE = (".lock", ".mailfathom-uids", ".mailfathom-uids.tmp")


# --------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 0.50),
        "p95_ms": percentile(ms, 0.95),
        "mean_ms": sum(ms) / len(ms),
        "min_ms": min(ms),
        "max_ms": max(ms),
    }


# --------------------------------------------------------------------------- code and machine


def git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    return out.stdout.strip()


def snapshot_code(work: Path) -> dict[str, Any]:
    """Copy src/ as it is in the work tree now, so that every phase of a run (the build, the
    in-process calls and the server) imports the same code while others edit the tree. The
    read side may not be committed yet, so the work tree is what is measured."""
    target = work / "code"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "src", target / "src", ignore=ignore)
    return {
        "snapshot": str(target),
        "source": "work tree (copied at start)",
        "git_head": git("rev-parse", "HEAD"),
        "git_head_subject": git("log", "-1", "--format=%s"),
        "uncommitted_in_src": git("status", "--porcelain", "--", "src"),
    }


def config_text(data_dir: Path, port: int, key_digest: str) -> str:
    """A deployment with one local account (as the demo writes it) and the MCP endpoint."""
    folders = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\nRole = "{role}"\n'
        for name, role in FOLDER_ROLES.items()
    )
    return f"""\
[Store]
DataDir = "{data_dir}"

[[Accounts]]
Id = "{ACCOUNT_ID}"
DisplayName = "Benchmark mailbox"
Kind = "local"
Addresses = ["{OWNER}"]
{folders}
[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{port}"
MetricsApiKeySha256 = "{key_digest}"

[[McpEndpoint.Callers]]
Name = "bench"
Credential = "apiKey"
ApiKeySha256 = "{key_digest}"
"""


def write_maildir(root: Path, count: int, seed: int) -> dict[str, Any]:
    """Write `count` generated messages into the local account's Maildir folders.

    Files are written the way a delivery agent leaves them (cur/, info flags in the name, the
    mtime set to the arrival time), not with `MaildirFolder.deliver`: that fsyncs every file
    and leaves the delivery moment as the mtime, which the local connector reads as the
    received time, so a 100,000-message timeline would span a few minutes instead of the
    years the generator spreads it over. `scan()` assigns UIDs to files it has not seen, in
    name order, which here is arrival order."""
    import mailgen

    made: dict[str, Path] = {}
    per_folder: dict[str, int] = {}
    sizes: list[int] = []
    start = time.perf_counter()
    pid = os.getpid()
    first = last = None
    for index, message in enumerate(mailgen.generate(count, seed=seed)):
        folder = message.folder
        if folder not in made:
            for sub in ("cur", "new", "tmp"):
                (root / folder / sub).mkdir(parents=True, exist_ok=True)
            made[folder] = root / folder / "cur"
        when = int(message.received_at.timestamp())
        first = when if first is None else first
        last = when
        name = f"{when}.M{index:07d}P{pid}.bench,S={len(message.raw)}:2,{message.flags}"
        path = made[folder] / name
        with open(path, "wb") as handle:
            handle.write(message.raw)
        os.utime(path, (when, when))
        per_folder[folder] = per_folder.get(folder, 0) + 1
        sizes.append(len(message.raw))
    for folder in FOLDER_ROLES:  # every configured folder exists, even an empty one
        for sub in ("cur", "new", "tmp"):
            (root / folder / sub).mkdir(parents=True, exist_ok=True)
    sizes.sort()
    octets = sum(sizes)
    return {
        "messages": len(sizes),
        "folders": per_folder,
        "octets": octets,
        "mean_octets": octets / max(1, len(sizes)),
        "median_octets": sizes[len(sizes) // 2] if sizes else 0,
        "p95_octets": sizes[int(len(sizes) * 0.95)] if sizes else 0,
        "max_octets": sizes[-1] if sizes else 0,
        "first_received": datetime.fromtimestamp(first or 0).isoformat(),
        "last_received": datetime.fromtimestamp(last or 0).isoformat(),
        "generate_and_write_s": time.perf_counter() - start,
    }


def directory_octets(path: Path) -> int:
    total = 0
    for directory, _dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(directory, name)).st_size
    return total


# --------------------------------------------------------------------------- notmuch


def notmuch_env(config: Path) -> dict[str, str]:
    return {**os.environ, "NOTMUCH_CONFIG": str(config)}


def write_notmuch_config(path: Path, database: Path, mail_root: Path) -> None:
    """The database lives beside the store, the mail is the local account's Maildir tree.
    Junk is tagged `spam` after indexing and `spam` is excluded from searches, which is what
    our tools do by default with the junk folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    database.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[database]\n"
        f"path={database}\n"
        f"mail_root={mail_root}\n\n"
        "[user]\nname=Demo Owner\n"
        f"primary_email={OWNER}\n\n"
        "[new]\ntags=inbox;unread\n"
        f"ignore={';'.join(NOTMUCH_IGNORE)}\n\n"
        "[search]\nexclude_tags=spam\n\n"
        "[maildir]\nsynchronize_flags=true\n"
    )


def notmuch(env: dict[str, str], *args: str, timeout: float = 600) -> str:
    out = subprocess.run(
        ["notmuch", *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"notmuch {args[0]} failed: {out.stderr.strip()[:500]}")
    return out.stdout


def build_notmuch(config: Path, env: dict[str, str]) -> dict[str, Any]:
    start = time.perf_counter()
    notmuch(env, "new", "--quiet", timeout=7200)
    indexed = time.perf_counter() - start
    start = time.perf_counter()
    notmuch(env, "tag", "+spam", "--", "folder:Junk", timeout=3600)
    tagged = time.perf_counter() - start
    return {
        "notmuch_new_s": indexed,
        "notmuch_tag_junk_s": tagged,
        "messages": int(notmuch(env, "count", "--exclude=false", "*").strip()),
    }


# --------------------------------------------------------------------------- the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP server exited during start-up ({process.returncode})")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError("the MCP server did not start listening")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
