"""How long making one batch of message files durable takes, by strategy.

    uv run python bench/fsync_strategies.py [--files 500] [--size 20000] [--dir /var/tmp]

Writes a batch of files the way the content store laid them out before it kept packs
(SHA-256 name, two levels of fan-out directories) and times only the flush that follows, for:

  - one fsync per file, then one per directory, one after the other;
  - the same with every file in one directory (one directory fsync);
  - the same fsyncs issued from a thread pool, so the file system can commit many of them
    in one journal transaction;
  - one syncfs(2) for the whole file system after the batch is written.

Each strategy starts from a clean page cache state (`sync` first) and its own directory.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

Flush = Callable[[list[int], set[Path], Path], None]


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sequential(fds: list[int], directories: set[Path], root: Path) -> None:
    for fd in fds:
        os.fsync(fd)
    for directory in directories:
        _fsync_dir(directory)


def pooled(workers: int) -> Flush:
    def flush(fds: list[int], directories: set[Path], root: Path) -> None:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(os.fsync, fds))
            list(pool.map(_fsync_dir, directories))

    return flush


def syncfs(fds: list[int], directories: set[Path], root: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        if libc.syncfs(fd) != 0:
            raise OSError(ctypes.get_errno(), "syncfs failed")
    finally:
        os.close(fd)


def run(
    name: str, flush: Flush, payloads: list[bytes], base: Path, *, fan_out: bool = True
) -> float:
    root = Path(tempfile.mkdtemp(prefix="fsync-", dir=base))
    os.sync()
    fds: list[int] = []
    directories: set[Path] = set()
    try:
        for raw in payloads:
            key = hashlib.sha256(raw + root.name.encode()).hexdigest()
            directory = root / key[:2] / key[2:4] if fan_out else root
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(directory / key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, raw)
            fds.append(fd)
            directories.add(directory)
        start = time.perf_counter()
        flush(fds, directories, root)
        elapsed = time.perf_counter() - start
    finally:
        for fd in fds:
            os.close(fd)
        shutil.rmtree(root, ignore_errors=True)
    per_file = 1000 * elapsed / len(payloads)
    print(f"{name:52} {elapsed:7.3f} s  {per_file:7.3f} ms/file", flush=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=500, help="files per batch")
    parser.add_argument("--size", type=int, default=20_000, help="octets per file")
    parser.add_argument("--dir", default="/var/tmp", help="where to write (its file system)")
    args = parser.parse_args()
    payloads = [os.urandom(args.size) for _ in range(args.files)]
    base = Path(args.dir)
    print(f"{args.files} files of {args.size} octets under {base}")
    run("sequential fsync, files then directories (today)", sequential, payloads, base)
    run("sequential fsync, one flat directory", sequential, payloads, base, fan_out=False)
    for workers in (8, 32):
        run(f"fsync from a pool of {workers} threads", pooled(workers), payloads, base)
    run("one syncfs() for the batch", syncfs, payloads, base)


if __name__ == "__main__":
    main()
