"""Readiness rounds: every check given a bound, a hung check holding one thread however often
readiness is asked, an error counted as not ready, and a round's answer reused while fresh."""

from __future__ import annotations

import threading

from mailfathom.entrypoints.health import Readiness


def test_a_check_that_raises_or_answers_false_is_named_failing() -> None:
    def broken() -> bool:
        raise OSError("/secret/path refused")

    readiness = Readiness({"store": lambda: True, "schema": lambda: False, "content": broken})
    assert readiness.failing() == ["schema", "content"]


def test_a_hung_check_fails_after_its_bound_and_is_not_started_again() -> None:
    release = threading.Event()
    started: list[int] = []

    def hangs() -> bool:
        started.append(1)
        release.wait(60)
        return True

    readiness = Readiness({"store": hangs, "content": lambda: True}, bound=0.05, fresh=0.0)
    for _ in range(5):
        assert readiness.failing() == ["store"]
    assert len(started) == 1
    release.set()
    thread = next(t for t in threading.enumerate() if t.name == "readiness-store")
    thread.join(10)
    assert readiness.failing() == []
    assert len(started) == 2


def test_an_answer_is_reused_while_fresh() -> None:
    now = [0.0]
    asked: list[int] = []

    def check() -> bool:
        asked.append(1)
        return True

    readiness = Readiness({"store": check}, fresh=1.0, clock=lambda: now[0])
    assert readiness.failing() == []
    now[0] = 0.5
    assert readiness.failing() == []
    assert len(asked) == 1
    now[0] = 1.5
    assert readiness.failing() == []
    assert len(asked) == 2
