"""How long assembling conversations takes, next to a plain grouping of the same input.

The baseline is the cheapest thing that could group messages by shared identifiers at all
(union-find over every identifier a message touches); the ratio says what the full RFC 5256
assembly (parents, loops, ghost roots, order) costs on top of it.

    uv run python bench/assemble_conversations.py [--messages 100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conversations.test_assembler_properties import synthetic_mailbox
from mailfathom.domain.conversations import assemble_conversations, connected_identifiers


def union_find_groups(inputs: list) -> int:  # type: ignore[type-arg]
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for message in inputs:
        ids = [f"key:{message.key}", *connected_identifiers(message)]
        root = find(ids[0])
        for other in ids[1:]:
            parent[find(other)] = root
    return len({find(f"key:{m.key}") for m in inputs})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    inputs = synthetic_mailbox(args.messages)
    started = time.process_time()
    groups = union_find_groups(inputs)
    baseline = time.process_time() - started
    started = time.process_time()
    conversations = assemble_conversations(inputs)
    ours = time.process_time() - started
    print(f"messages            {args.messages}")
    print(f"union-find baseline {baseline:.2f} s CPU ({groups} groups)")
    print(f"assembly            {ours:.2f} s CPU ({len(conversations)} conversations)")
    print(f"ratio               {ours / baseline:.2f}x the baseline")


if __name__ == "__main__":
    main()
