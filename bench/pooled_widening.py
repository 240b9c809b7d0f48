"""The pooled first stage's product: int8 rows widened block by block, or float32 kept.

    uv run --frozen python bench/pooled_widening.py [--messages 100000] [--dimension 384]
        [--repeats 31]

A hybrid search over many messages first compares the query with one pooled vector a
message (`adapters/vectors/messages.py`), held as int8 and a scale and widened to float32
a block of `scan.BLOCK_ROWS` rows at a time for its product (`scan.products`). Keeping the
pooled matrix as float32 once per snapshot would spare the widening at four times the
memory. Both are timed here on the same random rows, interleaved, with the product as
`products` makes it (blocks) and as one product of the whole matrix; the widening alone is
timed too. Medians in ms, and each against the int8 path measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR)]

import numpy as np  # noqa: E402
from machine import log  # noqa: E402

from mailfathom.adapters.vectors.scan import BLOCK_ROWS, products  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=31)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    octets = rng.integers(-127, 128, (args.messages, args.dimension), dtype=np.int8)
    scales = (rng.random(args.messages) / 127 / np.sqrt(args.dimension)).astype(np.float32)
    floats = octets.astype(np.float32) * scales[:, None]
    query = rng.standard_normal(args.dimension).astype(np.float32)
    query /= np.linalg.norm(query)

    def kept_blocks() -> None:
        found = np.empty(args.messages, dtype=np.float32)
        for start in range(0, args.messages, BLOCK_ROWS):
            np.matmul(
                floats[start : start + BLOCK_ROWS], query, out=found[start : start + BLOCK_ROWS]
            )

    def widening_only() -> None:
        block = np.empty((BLOCK_ROWS, args.dimension), dtype=np.float32)
        for start in range(0, args.messages, BLOCK_ROWS):
            part = octets[start : start + BLOCK_ROWS]
            np.copyto(block[: part.shape[0]], part, casting="unsafe")

    ways: dict[str, Callable[[], object]] = {
        "int8 widened a block at a time (now)": lambda: products(octets, scales, query),
        "float32 kept, a block at a time": kept_blocks,
        "float32 kept, one product": lambda: floats @ query,
        "the widening alone": widening_only,
    }
    spent: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeats):
        for name, way in ways.items():
            started = time.perf_counter()
            way()
            spent[name].append(time.perf_counter() - started)
    log(
        f"{args.messages} x {args.dimension}: int8 {octets.nbytes / 2**20:.0f} MiB, "
        f"float32 {floats.nbytes / 2**20:.0f} MiB; load {os.getloadavg()}"
    )
    base = statistics.median(spent[next(iter(ways))])
    for name, times in spent.items():
        median = statistics.median(times)
        print(f"{name:40} {median * 1000:7.2f} ms  {median / base:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
