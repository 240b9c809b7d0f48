"""The suite under pytest-xdist as scripts/test runs it (tests/parallel.py): a file's tests
stay in one worker, and each worker copies its logs to a file of its own, so the log audit of
a test never reads another worker's lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parallel import per_worker

pytest_plugins = ["pytester"]

CONFTEST = """
from parallel import own_log_copy


def pytest_configure(config):
    own_log_copy()
"""

PROBE = """
import json
import os
from pathlib import Path

import pytest


def _record(name):
    place = Path(os.environ["PROBE_RECORDS"]) / f"{name}.json"
    place.write_text(json.dumps({
        "worker": os.environ["PYTEST_XDIST_WORKER"],
        "log_copy": os.environ["MAILFATHOM_LOG_COPY"],
    }))


@pytest.mark.parametrize("n", range(4))
def test_probe(n):
    _record(f"{__name__}-{n}")
"""


@pytest.mark.process
def test_files_stay_whole_and_each_worker_logs_to_a_file_of_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    shared = tmp_path / "logs.log"
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent))
    monkeypatch.setenv("PROBE_RECORDS", str(records))
    monkeypatch.setenv("MAILFATHOM_LOG_COPY", str(shared))
    # Run from a worker of the suite's own parallel run, the inner run's controller would
    # otherwise take itself for that worker.
    for variable in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(variable, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_one=PROBE, test_two=PROBE, test_three=PROBE)
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile")
    run.assert_outcomes(passed=12)

    seen = {p.stem: json.loads(p.read_text()) for p in records.glob("*.json")}
    assert len(seen) == 12
    for module in ("test_one", "test_two", "test_three"):
        workers = {seen[f"{module}-{n}"]["worker"] for n in range(4)}
        assert len(workers) == 1, (module, workers)
    assert {r["worker"] for r in seen.values()} == {"gw0", "gw1"}
    for record in seen.values():
        assert record["log_copy"] == str(tmp_path / f"logs-{record['worker']}.log")


def test_a_path_is_the_workers_own_only_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert per_worker(Path("/a/chromium.log")) == Path("/a/chromium.log")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert per_worker(Path("/a/chromium.log")) == Path("/a/chromium-gw3.log")


def test_screenshots_are_listed_from_the_reports_a_worker_sends_back() -> None:
    from browser import fixtures

    properties = [(fixtures.SCREENSHOT, "/a/01-at-failure.png"), ("other", "/b")]
    call = pytest.TestReport("t", ("t.py", 0, "t"), {}, "failed", None, "call")
    teardown = pytest.TestReport(
        "t", ("t.py", 0, "t"), {}, "passed", None, "teardown", user_properties=properties
    )
    before = len(fixtures.TAKEN)
    try:
        fixtures.pytest_runtest_logreport(call)
        fixtures.pytest_runtest_logreport(teardown)
        assert fixtures.TAKEN[before:] == [Path("/a/01-at-failure.png")]
    finally:
        del fixtures.TAKEN[before:]
