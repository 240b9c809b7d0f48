"""What the machine-authorship reading costs per message, against the code of an earlier commit.

    uv run python bench/authorship_cost.py [--before REV] [--before-limit N] [--messages N]
    uv run python bench/authorship_cost.py --limits 1000,2000,4000,32000

The first form loads the authorship modules of commit `--before` (by default the code before
the reading was made cheap) next to the current ones, with the style character limit of that
code set to `--before-limit` (by default 32,000, the limit it published), and assesses the
same messages with both: the benchmark's generated mail (`mailgen`, bodies of some 12,700
characters) and the corpora `authorship_confusion.py` reads. It prints the CPU time per
message of each (the least of a few rounds, on the thread's clock, so the ratio holds on a
busy machine) and how many readings differ, signal by signal.

The second form decides the style character limit: for each limit it prints the cost and how
many readings differ from those under the first limit given last (the reference), per set.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR), str(BENCH_DIR.parent / "src")]

import authorship_confusion  # noqa: E402
import mailgen  # noqa: E402

from mailfathom.adapters.mime import normalize_message  # noqa: E402
from mailfathom.domain.authorship import AuthorshipReading  # noqa: E402
from mailfathom.domain.authorship_assessor import MachineAuthorshipAssessor  # noqa: E402
from mailfathom.domain.authorship_profile import DEFAULT_PROFILE  # noqa: E402

REPO = BENCH_DIR.parent
BEFORE = "1003f39"
_MODULES = ("assessor", "characters", "phrases", "profile", "style", "text")
_OWN_IMPORT = re.compile(r"mailfathom\.domain\.(authorship_(?:" + "|".join(_MODULES) + r"))\b")
Assess = Callable[[str | None, str], AuthorshipReading]
Texts = list[tuple[str | None, str]]


def load_before(revision: str, limit: int, into: Path) -> ModuleType:
    """The authorship modules of `revision` as the package `_authorship_before` (sharing the
    reading's types with the current code), its style character limit set to `limit`."""
    package = into / "_authorship_before"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in _MODULES:
        path = f"src/mailfathom/domain/authorship_{name}.py"
        source = subprocess.run(
            ["git", "show", f"{revision}:{path}"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (package / f"authorship_{name}.py").write_text(
            _OWN_IMPORT.sub(r"_authorship_before.\1", source)
        )
    sys.path.insert(0, str(into))
    text_module = importlib.import_module("_authorship_before.authorship_text")
    setattr(text_module, "STYLE_CHARACTER_LIMIT", limit)  # noqa: B010
    return importlib.import_module("_authorship_before.authorship_assessor")


def message_sets(corpora: Path, count: int) -> list[tuple[str, Texts]]:
    sets = [("mailgen", [_text(m.raw) for m in mailgen.generate(count)])]
    sets.extend(
        (name, [_text(raw) for raw in raws])
        for _, name, raws in authorship_confusion.corpora_rows(corpora)
    )
    return sets


def _text(raw: bytes) -> tuple[str | None, str]:
    message = normalize_message(raw)
    return message.subject, message.plain_text


def cost(assess: Assess, texts: Texts, rounds: int) -> float:
    """The least CPU seconds per message over `rounds` passes."""
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        for subject, plain in texts:
            assess(subject, plain)
        best = min(best, time.thread_time() - start)
    return best / len(texts)


def differences(before: Assess, after: Assess, texts: Texts) -> tuple[int, str]:
    """How many readings differ in band, likelihood or signals, and which signals came or
    went how often."""
    changed = 0
    moves: collections.Counter[str] = collections.Counter()
    for subject, plain in texts:
        old, new = before(subject, plain), after(subject, plain)
        if (old.state, old.likelihood, old.signals) != (new.state, new.likelihood, new.signals):
            changed += 1
            moves.update(f"+{s.value}" for s in set(new.signals) - set(old.signals))
            moves.update(f"-{s.value}" for s in set(old.signals) - set(new.signals))
            if old.state != new.state:
                moves[f"{old.state.value}->{new.state.value}"] += 1
    return changed, ", ".join(f"{k} {v}" for k, v in sorted(moves.items())) or "-"


def compare(args: argparse.Namespace, sets: Sequence[tuple[str, Texts]]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        module = load_before(args.before, args.before_limit, Path(scratch))
        before: Assess = module.MachineAuthorshipAssessor().assess
        after: Assess = MachineAuthorshipAssessor().assess
        for assess in (before, after):
            assess(None, "warm up \u200b")
        print(
            f"before: {args.before} at a style limit of {args.before_limit}; after: this tree, "
            f"limit {DEFAULT_PROFILE.style_character_limit}, profile {DEFAULT_PROFILE.revision}\n"
        )
        print(
            "| set | messages | before us/msg | after us/msg | after / before | readings changed "
            "| how |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for name, texts in sets:
            old, new = cost(before, texts, args.rounds), cost(after, texts, args.rounds)
            changed, how = differences(before, after, texts)
            print(
                f"| {name} | {len(texts)} | {1e6 * old:.0f} | {1e6 * new:.0f} "
                f"| {new / old:.3f} | {changed} | {how} |"
            )


def limits(args: argparse.Namespace, sets: Sequence[tuple[str, Texts]]) -> None:
    values = [int(v) for v in args.limits.split(",")]
    reference = MachineAuthorshipAssessor(
        dataclasses.replace(DEFAULT_PROFILE, style_character_limit=values[-1])
    ).assess
    print("| limit | set | us/msg | readings changed | how |")
    print("| ---: | --- | ---: | ---: | --- |")
    for limit in values:
        profile = dataclasses.replace(DEFAULT_PROFILE, style_character_limit=limit)
        assess = MachineAuthorshipAssessor(profile).assess
        for name, texts in sets:
            changed, how = differences(reference, assess, texts)
            spent = cost(assess, texts, args.rounds)
            print(f"| {limit} | {name} | {1e6 * spent:.0f} | {changed} | {how} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--messages", type=int, default=500, help="generated messages")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help="the commit to compare against")
    parser.add_argument("--before-limit", type=int, default=32_000)
    parser.add_argument("--limits", help="comma-separated style character limits to compare")
    args = parser.parse_args()
    sets = message_sets(args.corpora, args.messages)
    if args.limits:
        limits(args, sets)
    else:
        compare(args, sets)


if __name__ == "__main__":
    main()
