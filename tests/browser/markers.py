"""Which tests drive a browser, found from the fixtures they use."""

from __future__ import annotations

import pytest

BROWSER_FIXTURES = frozenset({"chromium", "browser", "new_page", "page", "screenshots", "axe"})


def add_browser_markers(items: list[pytest.Item]) -> None:
    """Mark `browser` every test using a browser fixture, and `process` as well: it starts
    Chromium and Playwright's driver, so `-m "not process"` and the fast tier leave it out."""
    for item in items:
        if BROWSER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker("browser")
            item.add_marker("process")
