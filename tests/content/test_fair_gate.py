"""The gate bounding a process's concurrent requests hands a freed turn to the longest
waiter: a busy reader cannot keep a writer waiting by taking its turn again at once."""

from __future__ import annotations

import threading

import pytest

from mailfathom.adapters.fair_gate import FairGate
from waiting import wait_for


def test_a_freed_turn_goes_to_the_waiter_not_to_a_caller_that_comes_back() -> None:
    gate = FairGate(1)
    gate.acquire()
    served: list[str] = []

    def waiter() -> None:
        with gate:
            served.append("waiter")

    thread = threading.Thread(target=waiter)
    thread.start()
    wait_for(lambda: gate.waiting == 1, "the second caller waiting")
    gate.release()
    # The caller that just let go comes straight back: the waiter is served first.
    assert not gate.acquire(blocking=False)
    with gate:
        served.append("returner")
    thread.join()
    assert served == ["waiter", "returner"]


def test_turns_are_bounded_and_given_back() -> None:
    gate = FairGate(2)
    assert gate.acquire(blocking=False)
    assert gate.acquire(blocking=False)
    assert not gate.acquire(blocking=False)
    assert not gate.acquire(timeout=0.01)
    gate.release()
    assert gate.acquire(timeout=0.01)
    gate.release()
    gate.release()
    assert gate.waiting == 0


def test_a_waiter_that_gives_up_leaves_no_turn_behind() -> None:
    gate = FairGate(1)
    gate.acquire()
    assert not gate.acquire(timeout=0.01)
    gate.release()
    # The abandoned wait did not swallow the freed turn.
    assert gate.acquire(blocking=False)
    gate.release()


def test_a_waiter_interrupted_while_waiting_leaves_no_turn_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gate = FairGate(1)
    gate.acquire()

    class Interrupted(Exception):
        pass

    real_lock = threading.Lock

    class _InterruptedWait:
        """A waiter's lock whose wait is cut short, as a Ctrl-C cuts the main thread's."""

        def __init__(self) -> None:
            self._lock = real_lock()

        def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
            if blocking and self._lock.locked():
                raise Interrupted
            return self._lock.acquire(blocking, timeout)

        def release(self) -> None:
            self._lock.release()

    # Only for the one call: the gate makes each waiter's lock when the waiter queues.
    monkeypatch.setattr(threading, "Lock", _InterruptedWait)
    with pytest.raises(Interrupted):
        gate.acquire()
    monkeypatch.undo()
    assert gate.waiting == 0
    gate.release()
    # The turn given back went to no one who left: it is free.
    assert gate.acquire(blocking=False)
    gate.release()
