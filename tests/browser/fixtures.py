"""Fixtures of the browser tests: one Chromium for the session, a fresh context per page,
screenshots kept per test, and axe-core run in the page.

A test using any of these is marked `browser` and `process` (browser/markers.py). Screenshots go
under `$MAILFATHOM_TEST_ARTIFACTS/browser/<test>/`, `tests/.artifacts/browser/<test>/` when
the variable is unset; a test's directory is emptied when it starts, and the run lists what
it took at the end.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from browser import axe_core
from browser.chromium import DESKTOP, Chromium, Viewport, new_context, started
from parallel import per_worker

TESTS = Path(__file__).resolve().parent.parent
TAKEN: list[Path] = []
OUTCOME = pytest.StashKey[dict[str, pytest.TestReport]]()


def artifacts() -> Path:
    configured = os.environ.get("MAILFATHOM_TEST_ARTIFACTS")
    return (Path(configured) if configured else TESTS / ".artifacts") / "browser"


SCREENSHOT = "browser screenshot"


@dataclass
class Screenshots:
    directory: Path
    test: pytest.Item
    taken: list[Path] = field(default_factory=list)

    def take(self, page: Page, name: str) -> Path:
        """The whole page as it is now, as `NN-name.png` in the test's directory."""
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")
        path = self.directory / f"{len(self.taken) + 1:02d}-{slug}.png"
        page.screenshot(path=path, full_page=True)
        self.taken.append(path)
        # Carried by the test's reports, which xdist brings back from the worker that ran it.
        self.test.user_properties.append((SCREENSHOT, str(path)))
        return path


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One Chromium for the run, or for each xdist worker (its output goes to `chromium.log`,
    `chromium-gw0.log`, ... beside the screenshots)."""
    artifacts().mkdir(parents=True, exist_ok=True)
    with started(per_worker(artifacts() / "chromium.log")) as running:
        yield running


@pytest.fixture
def browser(chromium: Chromium) -> Iterator[Browser]:
    """The run's Chromium, reached through Playwright for this test only."""
    with sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(chromium.endpoint)
        try:
            yield connected
        finally:
            connected.close()


@pytest.fixture
def screenshots(request: pytest.FixtureRequest) -> Screenshots:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.nodeid).strip("-")
    directory = artifacts() / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return Screenshots(directory, request.node)


@pytest.fixture
def new_page(
    browser: Browser, screenshots: Screenshots, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Page]]:
    """Opens a page in a context of its own (`new_page(PHONE)`, `new_page(locale="cs")`);
    each is closed after the test, and a failed test leaves a screenshot of every page."""
    contexts: list[BrowserContext] = []

    def open_page(viewport: Viewport = DESKTOP, locale: str = "en-US") -> Page:
        context = new_context(browser, viewport, locale)
        contexts.append(context)
        return context.new_page()

    yield open_page
    reports = request.node.stash.get(OUTCOME, {})
    failed = any(r.failed for r in reports.values())
    for context in contexts:
        if failed:
            for page in context.pages:
                screenshots.take(page, "at-failure")
        context.close()


@pytest.fixture
def page(new_page: Callable[..., Page]) -> Page:
    """A page in a fresh context with a desktop viewport."""
    return new_page()


@pytest.fixture
def axe() -> Callable[[Page], list[axe_core.Violation]]:
    """`axe(page)` runs axe-core in the page as it is now: it fails the test on a serious or
    critical finding (`axe_core.AccessibilityFailure`) and returns the lesser ones."""
    return axe_core.check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Keeps each phase's report on the test, for `new_page` to know it failed."""
    report = yield
    item.stash.setdefault(OUTCOME, {})[report.when] = report
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Lists the screenshots a test took, from its last report, wherever it ran."""
    if report.when == "teardown":
        TAKEN.extend(
            Path(str(value)) for name, value in report.user_properties if name == SCREENSHOT
        )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TAKEN:
        terminalreporter.section("browser screenshots")
        for path in TAKEN:
            terminalreporter.write_line(str(path))
