"""The gate bounding a process's concurrent requests hands a freed turn to the longest
waiter: a busy reader cannot keep a writer waiting by taking its turn again at once."""

from __future__ import annotations

import threading

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
