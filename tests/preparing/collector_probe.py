"""Runs one `mailfathom` command in this process and writes the cyclic garbage collector's
settings before and after it to a JSON file: the first argument names the file, the rest is
the command line.

    python collector_probe.py REPORT sync --config mailfathom.toml
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

from mailfathom.entrypoints.cli.main import app


def _settings() -> dict[str, int]:
    return {"threshold": gc.get_threshold()[0], "frozen": gc.get_freeze_count()}


def main() -> None:
    report, *command = sys.argv[1:]
    before = _settings()
    try:
        app(command, standalone_mode=False)
    finally:
        Path(report).write_text(json.dumps({"before": before, "after": _settings()}), "utf-8")


if __name__ == "__main__":
    main()
