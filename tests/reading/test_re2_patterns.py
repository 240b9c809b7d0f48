"""The RE2 adapter behind matchPattern: what it refuses, that refusing writes nothing (RE2's
own error log would print the pattern), and that spans are character positions."""

from __future__ import annotations

import pytest

from mailfathom.adapters.patterns.re2_patterns import Re2PatternCompiler

COMPILER = Re2PatternCompiler()


@pytest.mark.parametrize(
    "pattern",
    [r"(zephyr)\1", r"(?=zephyr)", r"(?<=zephyr)x", r"(?!zephyr)", "zephyr[", "(zephyr", "a{1001}"],
)
def test_what_re2_cannot_match_in_linear_time_is_refused_silently(
    pattern: str, capfd: pytest.CaptureFixture[str]
) -> None:
    assert COMPILER.compile(pattern) is None
    written = capfd.readouterr()
    assert written.out == ""
    assert written.err == ""


def test_a_program_over_the_memory_bound_is_refused() -> None:
    assert COMPILER.compile("((((a{100}){100}){100}){100})") is None


def test_case_is_ignored_until_the_pattern_turns_it_on() -> None:
    pattern = COMPILER.compile("ferry(?-i)X")
    assert pattern is not None
    assert pattern.found_in("the FERRYX")
    assert not pattern.found_in("the FERRYx")


def test_spans_are_character_positions_non_empty_and_limited() -> None:
    pattern = COMPILER.compile("b*")
    assert pattern is not None
    text = "éé😀bb·b"
    assert pattern.spans(text, 10) == [(3, 5), (6, 7)]
    assert [text[s:e] for s, e in pattern.spans(text, 10)] == ["bb", "b"]
    assert pattern.spans(text, 1) == [(3, 5)]
    assert pattern.found_in("")
