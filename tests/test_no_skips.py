"""No test skips on the machines the suite is meant for (root, the servers installed, the
shared corpora beside the repository): a skip there is a check that never runs. The one skip
allowed is the corpora fixture's, for a checkout without the corpora."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_SKIPPING = {"skip", "skipif", "importorskip", "xfail", "skipTest", "SkipTest"}
_ALLOWED = {("servers/fixtures.py", "skip")}


def _skips(path: Path) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        name = node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.Name):
            name = node.id
        if name in _SKIPPING:
            found.add((path.relative_to(TESTS).as_posix(), name))
    return found


def test_no_test_can_skip_but_for_absent_corpora() -> None:
    found = set().union(*(_skips(path) for path in TESTS.rglob("*.py")))
    assert ("servers/fixtures.py", "skip") in found
    assert found - _ALLOWED == set()
