"""Debian's Chromium, driven by Playwright.

Playwright never downloads a browser here: it is given `/usr/bin/chromium` (installed by
scripts/test in the full tier). Playwright starts it with a new, empty profile directory of its
own (`--user-data-dir`) and removes it afterwards. The flags keep the browser from reaching
anything but the pages a test opens: without the background-networking ones it tries the
network at start and a closed network refuses it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Playwright, ViewportSize

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


def launch(playwright: Playwright) -> Browser:
    if not CHROMIUM.exists():
        raise FileNotFoundError(
            f"{CHROMIUM} is missing: scripts/test installs Debian's `chromium` package"
        )
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(FLAGS))


def new_context(browser: Browser, viewport: Viewport, locale: str = "en-US") -> BrowserContext:
    """A context of its own: no cookie, storage or cache shared with any other."""
    return browser.new_context(
        viewport=viewport.size(),
        device_scale_factor=viewport.device_scale_factor,
        is_mobile=viewport.is_mobile,
        has_touch=viewport.has_touch,
        locale=locale,
    )
