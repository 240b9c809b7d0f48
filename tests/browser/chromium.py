"""Debian's Chromium, started once for the run and driven by Playwright.

Playwright never downloads a browser here: the tests start `/usr/bin/chromium` (installed by
scripts/test in the full tier) themselves, with a new, empty profile directory and the
debugging protocol on a loopback port, and each test connects Playwright to it for its own
duration. Playwright's synchronous API keeps an asyncio loop marked running in the thread while
it is connected, which would stop every later test that runs a coroutine (`asyncio.run`); a
connection per test confines that to the browser tests. The flags keep the browser from
reaching anything but the pages a test opens: without the background-networking ones it tries
the network at start and a closed network refuses it.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, ViewportSize

CHROMIUM = Path(os.environ.get("MAILFATHOM_CHROMIUM", "/usr/bin/chromium"))
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


@dataclass(frozen=True)
class Viewport:
    width: int
    height: int
    device_scale_factor: float
    is_mobile: bool
    has_touch: bool

    def size(self) -> ViewportSize:
        return {"width": self.width, "height": self.height}


DESKTOP = Viewport(1280, 800, 1, is_mobile=False, has_touch=False)
# A common phone held upright: 360 CSS pixels wide, three device pixels to one.
PHONE = Viewport(360, 740, 3, is_mobile=True, has_touch=True)


@dataclass(frozen=True)
class Chromium:
    """A running Chromium; `endpoint` is its debugging protocol's address on loopback."""

    endpoint: str
    pid: int


@contextmanager
def started(log: Path) -> Iterator[Chromium]:
    """Chromium with a new, empty profile, stopped (and the profile removed) on leaving."""
    if not CHROMIUM.exists():
        raise FileNotFoundError(
            f"{CHROMIUM} is missing: scripts/test installs Debian's `chromium` package"
        )
    with tempfile.TemporaryDirectory(prefix="mailfathom-chromium-") as profile:
        with log.open("ab") as output:
            process = subprocess.Popen(
                [
                    str(CHROMIUM),
                    *FLAGS,
                    f"--user-data-dir={profile}",
                    "--remote-debugging-address=127.0.0.1",
                    "--remote-debugging-port=0",
                    "about:blank",
                ],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
            )
        try:
            yield Chromium(_endpoint(Path(profile) / "DevToolsActivePort", process), process.pid)
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _endpoint(active_port: Path, process: subprocess.Popen[bytes]) -> str:
    """The address Chromium writes to its profile once it listens (port, then path)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with status {process.returncode} at start")
        lines = active_port.read_text("ascii").split() if active_port.exists() else []
        if len(lines) == 2:
            return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        time.sleep(0.05)
    raise TimeoutError("chromium did not open its debugging port within 60 s")


def new_context(browser: Browser, viewport: Viewport, locale: str = "en-US") -> BrowserContext:
    """A context of its own: no cookie, storage or cache shared with any other."""
    return browser.new_context(
        viewport=viewport.size(),
        device_scale_factor=viewport.device_scale_factor,
        is_mobile=viewport.is_mobile,
        has_touch=viewport.has_touch,
        locale=locale,
    )
