"""The fleet's worker processes by role, and the chaos loop that SIGKILLs a random one every
few seconds and starts a replacement of the same role."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from sync.workers import kill, start_worker, stop


class Fleet:
    """`sync` and `delivery` worker processes over one configuration, each named after its
    role and a running number, logging to a file of its own under `logs`."""

    def __init__(self, config: Path, env: Mapping[str, str], logs: Path) -> None:
        self._config = config
        self._env = dict(env)
        self._logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        self._running: dict[str, tuple[str, subprocess.Popen[bytes]]] = {}
        self._started: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.killed: Counter[str] = Counter()

    def start(self, role: str, count: int = 1) -> None:
        for _ in range(count):
            with self._lock:
                self._started[role] += 1
                name = f"{role}-{self._started[role]}"
            process = start_worker(
                self._config, name, role, env=self._env, log=self._logs / f"{name}.log"
            )
            with self._lock:
                self._running[name] = (role, process)

    def kill_one(self, rng: random.Random) -> str:
        """SIGKILL a random running worker and start one of the same role in its place."""
        with self._lock:
            name = rng.choice(sorted(self._running))
            role, process = self._running.pop(name)
        kill(process)
        self.killed[role] += 1
        self.start(role)
        return name

    def running(self) -> Counter[str]:
        with self._lock:
            return Counter(
                role for role, process in self._running.values() if process.poll() is None
            )

    def stop_all(self) -> dict[str, int]:
        """SIGTERM every worker (SIGKILL after a wait); their exit statuses by name."""
        with self._lock:
            running, self._running = self._running, {}
        return {name: stop(process) for name, (_role, process) in running.items()}

    def kill_all(self) -> None:
        with self._lock:
            running, self._running = self._running, {}
        for _role, process in running.values():
            kill(process)


def chaos(
    fleet: Fleet, stop_event: threading.Event, rng: random.Random, between: tuple[float, float]
) -> None:
    """Until `stop_event`: wait a random time in `between` seconds, then kill one worker."""
    while not stop_event.wait(rng.uniform(*between)):
        fleet.kill_one(rng)


def wait_until(predicate: Callable[[], bool], timeout: float, every: float = 2.0) -> bool:
    """Whether `predicate()` came true within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(every)
