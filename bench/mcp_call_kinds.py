"""Each kind of call of the throughput mix alone, on one serving process: what each costs.

Used by `mcp_throughput.py --per-kind` (and `--against SRC`, which measures another copy of
src/ on the same deployment, kind by kind in turn with the code under test, so that both
meet the same state of the host). A kind is a tool with the shape of its arguments: one id,
three ids or a conversation for `get_email_content`; a plain page, one folder, one sender or
a next page by cursor for `list_emails`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Each kind is measured over at least this many calls of its own in turn (repeated when the
# mix holds fewer), so a load's first twelve, compared through the official client, exist.
_LEAST = 12


def kind_of(call: dict[str, Any]) -> str:
    arguments = call["arguments"]
    name: str = call["name"]
    if "threadId" in arguments:
        return f"{name}/conversation"
    if "storedEmailIds" in arguments:
        return f"{name}/{len(arguments['storedEmailIds'])} id(s)"
    for argument, shape in (("cursor", "next page"), ("senderAddress", "sender"),
                            ("folders", "folder")):  # fmt: skip
        if argument in arguments:
            return f"{name}/{shape}"
    return name


def by_kind(calls: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        found.setdefault(kind_of(call), []).append(call)
    return {k: (v * _LEAST)[: max(_LEAST, len(v))] for k, v in sorted(found.items())}


def measure_kinds(
    calls: list[dict[str, Any]],
    work: Path,
    codes: dict[str, Path],
    measure: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """Each kind alone under each of `codes` (a label and a copy of src/), in turn."""
    found: list[dict[str, Any]] = []
    for kind, alone in by_kind(calls).items():
        for label, source in codes.items():
            if (work / "code").exists():
                shutil.rmtree(work / "code")
            shutil.copytree(source, work / "code" / "src")
            run = measure(alone)
            found.append({"kind": kind, "code": label, "share": _share(calls, kind), **run})
    return found


def _share(calls: list[dict[str, Any]], kind: str) -> float:
    return sum(1 for c in calls if kind_of(c) == kind) / max(1, len(calls))


def report_kinds(kinds: list[dict[str, Any]]) -> None:
    if not kinds:
        return
    print("\nEach kind of call alone, one process (share: of the mix's calls)")
    print(f"{'kind':<34} {'code':<8} {'share':>5} {'calls/s':>8} {'p95 ms':>8} "
          f"{'cpu ms/call':>11} {'db ms/call':>10} {'stmt/call':>9}")  # fmt: skip
    for run in kinds:
        db = run.get("database_cpu_ms_per_call")
        statements = run.get("statements_per_call")
        print(
            f"{run['kind']:<34} {run['code']:<8} {run['share']:>5.2f} "
            f"{run['calls_per_s']:>8.1f} {run['p95_ms']:>8.1f} "
            f"{run['server_cpu_ms_per_call']:>11.2f} "
            f"{'-' if db is None else f'{db:.2f}':>10} "
            f"{'-' if statements is None else f'{statements:.2f}':>9}"
        )
