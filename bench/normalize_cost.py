"""CPU cost of each step of MIME normalization, on generated mail, without any server.

    uv run python bench/normalize_cost.py [--messages 3000]

Each message goes through the steps of `normalize_message` one after the other (the parse,
by the fast route where the code has one, then header fields, MIME walk and parser defects),
each timed with the thread's CPU clock, so the figures hold on a busy machine, and no large
set of parsed messages is kept alive meanwhile. Reference points: parsing the header block
alone, the whole of `normalize_message`, SHA-256 (what the content store computes for every
message anyway) and the stdlib parser on the whole message.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from email import policy
from email.message import Message
from email.parser import BytesParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mailgen

from mailfathom.adapters.mime import normalize, normalize_message
from mailfathom.adapters.mime.headers import read_header_fields
from mailfathom.adapters.mime.structure import parser_defects, read_content

# Newer code reaches the parser's tree by a faster route first, and falls back to the stdlib.
_FAST = getattr(normalize, "parse_fast", None)


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
    clock = time.thread_time
    full_parse = full.parsebytes

    def parse(raw: bytes) -> Message:
        return (_FAST(raw) if _FAST else None) or full_parse(raw)

    steps = dict.fromkeys(
        (
            "parse, as normalize_message does it",
            "read_header_fields",
            "read_content (MIME walk, decode, HTML to text)",
            "parser_defects",
            "parse the header block alone (stdlib)",
            "normalize_message (all of it)",
            "hashlib.sha256",
            "stdlib BytesParser(compat32).parsebytes",
        ),
        0.0,
    )
    names = list(steps)
    for raw in raws:
        t0 = clock()
        message = parse(raw)
        t1 = clock()
        read_header_fields(message)
        t2 = clock()
        read_content(message)
        t3 = clock()
        parser_defects(message)
        t4 = clock()
        full.parsebytes(raw[: raw.find(b"\n\n") + 1])
        t5 = clock()
        normalize_message(raw)
        t6 = clock()
        hashlib.sha256(raw).hexdigest()
        t7 = clock()
        full.parsebytes(raw)
        t8 = clock()
        for name, spent in zip(
            names,
            (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7),
            strict=True,
        ):
            steps[name] += spent
    total = steps["normalize_message (all of it)"]
    for index, (name, spent) in enumerate(steps.items()):
        if index == 4:
            print("reference points:")
        indent = "  " if index < 4 else ""
        print(
            f"  {indent}{name:50} {1e6 * spent / len(raws):8.1f} us/msg"
            f"  {100 * spent / total:5.1f}% of normalize_message"
        )


if __name__ == "__main__":
    main()
