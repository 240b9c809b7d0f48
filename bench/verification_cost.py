"""CPU per message of the sender-verification engine alone, with its key cache warm.

    uv run python bench/verification_cost.py [--messages N] [--rounds R]

Signs N generated messages as the verification phase of `initial_sync.py` does, publishes
the keys on a loopback name server, and verifies every message in one thread R times (the
fastest round reported): with dkimpy as released, then with two of its helpers replaced by
equivalents that do less, to size what a faster verifier would save. Each variant must reach
the same verdicts as the first.

  canonicalization  the relaxed body canonicalization's regular expressions skipped where
                    they would change nothing (no blank before a line end, no tab or double
                    blank in the body)
  int2str           dkimpy's integer-to-octets conversion, a Python loop, by `int.to_bytes`
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent / "tests"), str(BENCH_DIR.parent / "src")]

import mailgen  # noqa: E402
import trust_cost  # noqa: E402


def timed(engine: Any, messages: list[bytes], rounds: int) -> tuple[float, list[Any]]:
    best = float("inf")
    verdicts: list[Any] = []
    for _ in range(rounds):
        started = time.thread_time()
        verdicts = [
            engine.verify(raw, headers_only=False, trusted_authserv_ids=frozenset())
            for raw in messages
        ]
        best = min(best, time.thread_time() - started)
    return 1000 * best / len(messages), verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    import dkim.canonicalization as canonicalization
    import dkim.crypto as crypto

    from mailfathom.adapters.authentication.engine import build_sender_verifier
    from mailfathom.domain.config import SenderVerificationConfig
    from servers.dns import DnsServer

    domains = {address.rpartition("@")[2] for _, address in [*mailgen.PEOPLE, mailgen.ME]}
    signed = trust_cost.SignedMailbox(args.seed + 1, domains)
    messages = [
        m.raw.replace(b"\n", b"\r\n")
        for m in signed.sign(mailgen.generate(args.messages, seed=args.seed))
    ]
    dns = DnsServer().start()
    try:
        trust_cost.publish(dns, signed)
        engine = build_sender_verifier(SenderVerificationConfig(resolver=dns.address))
        assert engine is not None
        timed(engine, messages, 1)  # fills the key cache
        released, expected = timed(engine, messages, args.rounds)
        print(f"{len(messages)} messages, {dict(signed.kinds)}; CPU per message, one thread:")
        print(f"  dkimpy as released                  {released:6.3f} ms")

        trailing, compress = (
            canonicalization.strip_trailing_whitespace,
            canonicalization.compress_whitespace,
        )

        def strip_trailing(content: bytes) -> bytes:
            changes = b" \r\n" in content or b"\t\r\n" in content
            return trailing(content) if changes else content

        def compress_blanks(content: bytes) -> bytes:
            changes = b"\t" in content or b"  " in content
            return compress(content) if changes else content

        canonicalization.strip_trailing_whitespace = strip_trailing
        canonicalization.compress_whitespace = compress_blanks
        shortcut, verdicts = timed(engine, messages, args.rounds)
        assert verdicts == expected
        print(f"  and canonicalization shortcuts      {shortcut:6.3f} ms")

        def int2str(n: int, length: int = -1) -> bytes:
            size = length if length >= 0 else max(1, (n.bit_length() + 7) // 8)
            return n.to_bytes(size, "big")

        crypto.int2str = int2str
        both, verdicts = timed(engine, messages, args.rounds)
        assert verdicts == expected
        print(f"  and int2str by int.to_bytes         {both:6.3f} ms")
    finally:
        dns.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
