"""CPU cost of each step of MIME normalization, on generated mail, without any server.

    uv run python bench/normalize_cost.py [--messages 3000]

Measured with process CPU time (not wall time), so the figures hold on a busy machine. Besides
the steps of `normalize_message` it times two reference points: parsing the header block
alone, and hashing the message (what the content store does to every message anyway).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Callable
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mailgen

from mailfathom.adapters.mime import normalize_message
from mailfathom.adapters.mime.headers import read_header_fields
from mailfathom.adapters.mime.structure import parser_defects, read_content


def cpu(label: str, items: list[Any], step: Callable[[Any], object], total: float | None) -> float:
    start = time.process_time()
    for item in items:
        step(item)
    elapsed = time.process_time() - start
    per = 1e6 * elapsed / len(items)
    share = f"{100 * elapsed / total:5.1f}%" if total else "      "
    print(f"  {label:52} {per:8.1f} us/msg  {share}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    raws = [m.raw for m in mailgen.generate(args.messages, seed=args.seed)]
    octets = sum(len(r) for r in raws)
    print(f"{len(raws)} messages, mean {octets / len(raws) / 1000:.1f} KB; CPU per message:")
    full = BytesParser(policy=policy.compat32)
    for raw in raws[:200]:  # warm caches and lazy imports
        normalize_message(raw)
    total = cpu("normalize_message (all of it)", raws, normalize_message, None)
    parsed = [full.parsebytes(r) for r in raws]
    cpu("  parse: BytesParser(compat32).parsebytes", raws, full.parsebytes, total)
    cpu("  read_header_fields", parsed, read_header_fields, total)
    cpu("  read_content (MIME walk, decode, HTML)", parsed, read_content, total)
    cpu("  parser_defects", parsed, parser_defects, total)
    print("reference points:")
    blocks = [r[: r.find(b"\n\n") + 1] for r in raws]
    cpu("parse the header block alone", blocks, full.parsebytes, total)
    cpu(
        "parsebytes(headersonly=True) on the whole message",
        raws,
        lambda r: full.parsebytes(r, headersonly=True),
        total,
    )
    cpu(
        "bytes.decode('ascii', 'surrogateescape')",
        raws,
        lambda r: r.decode("ascii", "surrogateescape"),
        total,
    )
    cpu("hashlib.sha256", raws, lambda r: hashlib.sha256(r).hexdigest(), total)


if __name__ == "__main__":
    main()
