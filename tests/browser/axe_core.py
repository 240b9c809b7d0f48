"""axe-core, the accessibility checker, run inside the page under test.

The script is installed from npm into a cache directory outside the repository, once (a lock
keeps test workers apart), the way the MCP Inspector is (tests/mcp_inspector.py). It is given
to the page through the browser's debugging protocol rather than as a `<script>` element, so a
page's Content-Security-Policy stays as strict as it is served and is itself under test.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import Any

from playwright.sync_api import Page

from mcp_inspector import CACHE

AXE_VERSION = "4.14.1"
# What fails a page; `minor` and `moderate` findings are reported, not failed.
FAILING_IMPACTS = frozenset({"serious", "critical"})


@dataclass(frozen=True)
class Violation:
    rule: str
    impact: str
    help: str
    targets: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.rule} ({self.impact}): {self.help} at {', '.join(self.targets)}"


class AccessibilityFailure(AssertionError):
    """A page has serious or critical accessibility findings."""

    def __init__(self, url: str, violations: list[Violation]) -> None:
        self.violations = violations
        lines = "\n  ".join(str(v) for v in violations)
        super().__init__(f"axe-core {AXE_VERSION} found on {url}:\n  {lines}")


@cache
def script() -> str:
    """The text of axe.min.js, installed from npm on first use."""
    home = CACHE / f"axe-core-{AXE_VERSION}"
    home.mkdir(parents=True, exist_ok=True)
    source = home / "node_modules/axe-core/axe.min.js"
    with (home / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not source.exists():
            (home / "package.json").write_text('{"name": "runner", "private": true}', "utf-8")
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--ignore-scripts",
                    f"--cache={home / 'npm-cache'}",
                    f"axe-core@{AXE_VERSION}",
                ],
                cwd=home,
                check=True,
                timeout=600,
                stdin=subprocess.DEVNULL,
                capture_output=True,
            )
    return source.read_text("utf-8")


def violations(page: Page) -> list[Violation]:
    """Every violation axe-core finds in the page as it is now, of any impact."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(script())
    found: list[dict[str, Any]] = page.evaluate(
        "() => axe.run(document, {resultTypes: ['violations']}).then(r => r.violations)"
    )
    return [
        Violation(
            rule=v["id"],
            impact=v.get("impact") or "unknown",
            help=v["help"],
            targets=tuple(json.dumps(n["target"]) for n in v["nodes"]),
        )
        for v in found
    ]


def check(page: Page) -> list[Violation]:
    """Fail on a serious or critical finding; the lesser ones are returned for the report."""
    found = violations(page)
    failing = [v for v in found if v.impact in FAILING_IMPACTS]
    if failing:
        raise AccessibilityFailure(page.url, failing)
    return found
