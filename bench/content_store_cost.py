"""Cost of writing raw messages into the content store, without any server.

    uv run python bench/content_store_cost.py [--messages 5000] [--dir /var/tmp]

Generated messages are written in batches of 500 into a fresh store:

  - `PackContentStore.write_many` as the sync's workers use it (durable: one write and one
    fdatasync of the pack, one index transaction per batch);
  - the same without flushing (durable=False), i.e. the CPU and file-system work alone;
  - one file per message, as the store did before packs, with plain os calls: hash, create
    the fan-out directories once, open a temporary file with O_EXCL, write, rename (no
    flush); with two, one and no fan-out levels;
  - hashing alone.

Creating a file is what differs: on the machine these figures come from it cost 0.03 ms in
some directories and 0.6 to 1.0 ms in others of the same file system.

Wall and process CPU (user + system) per message are printed for each.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mailgen

from mailfathom.adapters.content.packs import PackContentStore

BATCH = 500


def cpu_now() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


def lean_put(root: Path, made: set[str], raws: list[bytes], levels: int = 2) -> None:
    for raw in raws:
        key = hashlib.sha256(raw).hexdigest()
        directory = "/".join([str(root), *(key[2 * i : 2 * i + 2] for i in range(levels))])
        if directory not in made:
            os.makedirs(directory, exist_ok=True)
            made.add(directory)
        tmp = f"{directory}/.tmp-{key}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, raw)
        finally:
            os.close(fd)
        os.rename(tmp, f"{directory}/{key}")


def measure(
    label: str, base: Path, raws: list[bytes], put: Callable[[Path, list[bytes]], object]
) -> None:
    root = Path(tempfile.mkdtemp(prefix="content-", dir=base))
    os.sync()
    wall0, (user0, sys0) = time.perf_counter(), cpu_now()
    for start in range(0, len(raws), BATCH):
        put(root, raws[start : start + BATCH])
    wall, (user1, sys1) = time.perf_counter() - wall0, cpu_now()
    n = len(raws)
    print(
        f"  {label:52} wall {1000 * wall / n:6.3f}  user {1000 * (user1 - user0) / n:6.3f}"
        f"  system {1000 * (sys1 - sys0) / n:6.3f}  ms/msg",
        flush=True,
    )
    shutil.rmtree(root, ignore_errors=True)
    os.sync()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--only", help="run one way only")
    args = parser.parse_args()
    base = Path(args.dir)
    raws = [m.raw for m in mailgen.generate(args.messages, seed=11)]
    print(f"{len(raws)} messages, mean {sum(map(len, raws)) / len(raws) / 1000:.1f} KB:")

    def store(durable: bool) -> Callable[[Path, list[bytes]], None]:
        stores: dict[Path, PackContentStore] = {}

        def put(root: Path, batch: list[bytes]) -> None:
            if root not in stores:
                stores[root] = PackContentStore(root, durable=durable)
            stores[root].write_many(batch)

        return put

    made: set[str] = set()
    ways: dict[str, tuple[str, Callable[[Path, list[bytes]], object]]] = {
        "durable": ("PackContentStore.write_many, durable (as synced)", store(True)),
        "plain": ("PackContentStore.write_many, durable=False", store(False)),
        "lean2": ("lean os calls, 2 fan-out levels, no flush", lambda r, b: lean_put(r, made, b)),
        "lean1": (
            "lean os calls, 1 fan-out level, no flush",
            lambda r, b: lean_put(r, made, b, levels=1),
        ),
        "lean0": ("lean os calls, one directory, no flush", lambda r, b: lean_put(r, made, b, 0)),
        "hash": ("sha256 only", lambda r, b: [hashlib.sha256(x).digest() for x in b]),
    }
    print("  (each way in a fresh process would be cleaner: --only NAME; names:", *ways, ")")
    for name, (label, put) in ways.items():
        if args.only in (None, name):
            measure(label, base, raws, put)


if __name__ == "__main__":
    main()
