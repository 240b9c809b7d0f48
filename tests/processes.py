"""Which tests start a process, found before they run and checked while they run.

`mark_process_tests` gives the `process` marker to every test whose own code, or the code of
a fixture it uses, reaches a way of starting a process: `subprocess`, `os.fork` and its kin,
`multiprocessing`, an asyncio or anyio subprocess, the MCP SDK's stdio client. Code defined
under tests/ is followed through the names it uses (functions, classes and their methods,
helper modules), so a test that calls a helper which starts `mailfathom serve`, or uses a
fixture that does, is found without a mark of its own. The real-server fixtures
(tests/servers/fixtures.py) carry markers of their own and are not followed.

`ProcessGuard` is what keeps that honest: it watches every process this interpreter starts
(Python's audit events, and the one start `multiprocessing` makes without one) and fails a
test that starts one, in its setup or its body, unless the test is marked `process` or uses
a real server (`dovecot`, `postgres`). A test the analysis misses therefore fails in every
run until it is marked, and the fast tier (`-m "not process ..."`) cannot quietly come to
start processes.
"""

from __future__ import annotations

import _posixsubprocess
import asyncio
import concurrent.futures
import inspect
import multiprocessing
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

import anyio
import pytest

TESTS = Path(__file__).resolve().parent
ALLOWED_MARKERS = ("process", "dovecot", "postgres")
# Real servers: marked by fixture name in servers/fixtures.py.
NOT_FOLLOWED = {"dovecot", "imap_account", "postgres_server", "postgres_url",
                "migrated_postgres_url", "migrated_postgres_template", "oauth_dovecot",
                "oauth_imap_account"}  # fmt: skip
_STARTING_ATTRIBUTES: dict[ModuleType, frozenset[str]] = {
    subprocess: frozenset(
        {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
    ),
    os: frozenset(
        {"fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "spawnv",
         "spawnve", "spawnl", "spawnle", "execv", "execve"}
    ),
    multiprocessing: frozenset({"Process", "Pool", "get_context"}),
    asyncio: frozenset({"create_subprocess_exec", "create_subprocess_shell"}),
    anyio: frozenset({"open_process", "run_process"}),
    concurrent.futures: frozenset({"ProcessPoolExecutor"}),
}  # fmt: skip
_STARTERS: set[int] = {
    id(getattr(module, name))
    for module, names in _STARTING_ATTRIBUTES.items()
    for name in names
    if hasattr(module, name)
}
# Names that start a process when called, wherever they were imported from.
_STARTER_NAMES = frozenset({"stdio_client", "StdioServerParameters"})
_AUDITED = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.system", "os.posix_spawn", "os.spawn",
     "os.exec", "pty.spawn", "mailfathom.tests.fork_exec"}
)  # fmt: skip


def _ours(value: Any) -> bool:
    """Whether `value` is code of this test tree (followed), rather than of a library."""
    module = value if isinstance(value, ModuleType) else sys.modules.get(value.__module__ or "")
    path = getattr(module, "__file__", None)
    return path is not None and Path(path).resolve().is_relative_to(TESTS)


class _Reach:
    """Whether a function reaches a way of starting a process, remembered per code object."""

    def __init__(self) -> None:
        self._known: dict[CodeType, bool] = {}

    def function(self, function: Callable[..., Any]) -> bool:
        function = inspect.unwrap(function)
        code = getattr(function, "__code__", None)
        if not isinstance(code, CodeType):
            return False
        return self._code(code, getattr(function, "__globals__", {}))

    def _code(self, code: CodeType, namespace: dict[str, Any]) -> bool:
        if code in self._known:
            return self._known[code]
        self._known[code] = False  # a cycle reaches nothing new
        names = set(code.co_names)
        found = any(self._name(name, names, namespace) for name in names) or any(
            self._code(const, namespace) for const in code.co_consts if isinstance(const, CodeType)
        )
        self._known[code] = found
        return found

    def _name(self, name: str, names: set[str], namespace: dict[str, Any]) -> bool:
        if name in _STARTER_NAMES:
            return True
        value = namespace.get(name)
        if value is None:
            return False
        if id(value) in _STARTERS:
            return True
        if isinstance(value, ModuleType):
            if value in _STARTING_ATTRIBUTES:
                return bool(names & _STARTING_ATTRIBUTES[value])
            if _ours(value):
                return any(self._value(getattr(value, n, None)) for n in names)
            return False
        return self._value(value)

    def _value(self, value: Any) -> bool:
        if not isinstance(value, FunctionType | type) or not _ours(value):
            return False
        if isinstance(value, FunctionType):
            return self.function(value)
        if isinstance(value, type):
            return any(
                self.function(function)
                for member in vars(value).values()
                for function in _functions_of(member)
            )
        return False


def _functions_of(member: Any) -> Iterator[Callable[..., Any]]:
    """The functions a class attribute holds: a method, or those behind a property."""
    if isinstance(member, property):
        yield from (f for f in (member.fget, member.fset, member.fdel) if f is not None)
    elif isinstance(member, staticmethod | classmethod):
        yield member.__func__
    elif isinstance(member, FunctionType):
        yield member


def starts_a_process(function: Callable[..., Any]) -> bool:
    """Whether `function`, or code of this test tree it uses, reaches a start of a process."""
    return _Reach().function(function)


def mark_process_tests(items: list[pytest.Item]) -> None:
    """Mark `process` every test whose code or fixtures reach a start of a process."""
    reach = _Reach()
    for item in items:
        if item.get_closest_marker("process") is not None:
            continue
        functions: list[Callable[..., Any]] = []
        if isinstance(item, pytest.Function):
            functions.append(item.obj)
            for name, definitions in item._fixtureinfo.name2fixturedefs.items():
                if name not in NOT_FOLLOWED:
                    functions.extend(d.func for d in definitions)
        if any(reach.function(f) for f in functions):
            item.add_marker("process")


class ProcessGuard:
    """Fails a test, not marked to, that starts a process in its setup or its body."""

    def __init__(self) -> None:
        self._item: pytest.Item | None = None
        self._fixture: str | None = None
        self._started: list[str] = []

    def install(self) -> None:
        sys.addaudithook(self._audit)
        # multiprocessing's spawn and forkserver start processes with no audit event.
        fork_exec = _posixsubprocess.fork_exec

        def audited_fork_exec(*args: Any) -> Any:
            sys.audit("mailfathom.tests.fork_exec")
            return fork_exec(*args)

        _posixsubprocess.fork_exec = audited_fork_exec

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event in _AUDITED and self._item is not None:
            where = f"fixture '{self._fixture}'" if self._fixture else "the test"
            self._started.append(f"{event} in {where}")

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef[Any]) -> Iterator[Any]:
        outer, self._fixture = self._fixture, fixturedef.argname
        try:
            return (yield)
        finally:
            self._fixture = outer

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._watch(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._watch(item))

    def _watch(self, item: pytest.Item) -> Iterator[None]:
        self._item, self._started = item, []
        try:
            result = yield
        finally:
            self._item = None
        allowed = any(item.get_closest_marker(m) is not None for m in ALLOWED_MARKERS)
        if self._started and not allowed:
            pytest.fail(
                f"started a process ({'; '.join(sorted(set(self._started)))}) without the "
                "`process` marker: mark the test `@pytest.mark.process` (see tests/processes.py)",
                pytrace=False,
            )
        return result
