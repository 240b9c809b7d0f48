"""Which tests start a process: found from their code before they run (tests/processes.py),
and a test that starts one unmarked fails."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from processes import starts_a_process

pytest_plugins = ["pytester"]


def _samples() -> dict[str, Callable[..., Any]]:
    # Looked up by name, so this module's own code names none of them.
    module = importlib.import_module("process_samples")
    return {name: value for name, value in vars(module).items() if name.startswith("starts")}


def test_code_that_reaches_a_process_start_is_found_through_helpers() -> None:
    samples = _samples()
    found = {name for name, function in samples.items() if starts_a_process(function)}
    assert found == {name for name in samples if not name.startswith("starts_nothing")}
    assert len(found) == 7


GUARDED = """
import multiprocessing
import os
import subprocess

import pytest


def _hidden(module, name):
    # Reached by a name spelled at run time: the code shows no process start.
    return getattr(module, name)


def test_hidden_command():
    _hidden(subprocess, "r" + "un")(["true"], check=True)


def test_hidden_spawn():
    context = _hidden(multiprocessing, "get_" + "context")("spawn")
    child = _hidden(context, "Pro" + "cess")(target=os.getpid)
    child.start()
    child.join()


@pytest.fixture
def hidden_fixture():
    _hidden(subprocess, "r" + "un")(["true"], check=True)


def test_hidden_in_a_fixture(hidden_fixture):
    pass


@pytest.mark.process
def test_hidden_but_marked():
    _hidden(subprocess, "r" + "un")(["true"], check=True)


def test_plain_command():
    subprocess.run(["true"], check=True)


def test_no_process():
    assert os.getpid() > 0
"""

CONFTEST = """
from processes import ProcessGuard, mark_process_tests


def pytest_configure(config):
    guard = ProcessGuard()
    guard.install()
    config.pluginmanager.register(guard, "guard")


def pytest_collection_modifyitems(config, items):
    mark_process_tests(items)
"""


@pytest.mark.process
def test_an_unmarked_test_that_starts_a_process_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_guarded=GUARDED)
    pytester.makeini("[pytest]\nmarkers =\n    process: starts a process\n")
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    run.assert_outcomes(passed=3, failed=2, errors=1)
    run.stdout.fnmatch_lines(
        [
            "*ERROR at setup of test_hidden_in_a_fixture*",
            "started a process (subprocess.Popen in fixture 'hidden_fixture') without*",
            "*_ test_hidden_command _*",
            "started a process (subprocess.Popen in the test) without the `process` marker*",
            "*_ test_hidden_spawn _*",
            "started a process (mailfathom.tests.fork_exec in the test) without*",
        ]
    )
    fast = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not process")
    # The plain command is marked from its code and left out with the marked one.
    fast.assert_outcomes(passed=1, failed=2, errors=1)
