"""Passages: bounded, overlapping, headed by the subject, at most a ceiling per message."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mailfathom.domain import passages
from mailfathom.domain.passages import LONGEST_WORD, MAX_PASSAGES, PASSAGE_CHARACTERS, passages_of


def _numbered(count: int) -> str:
    return " ".join(f"word{i:05d}" for i in range(count))


def test_a_short_message_is_one_passage_headed_by_its_subject() -> None:
    assert passages_of("Re: Fwd: The leak", "Water came through the ceiling.") == [
        "The leak\nWater came through the ceiling."
    ]


def test_a_message_without_text_of_its_own_is_its_subject_or_nothing() -> None:
    assert passages_of("Lunch?", "> all of it quoted\n> from before") == ["Lunch?"]
    assert passages_of(None, "") == []
    assert passages_of("", None) == []


def test_a_long_message_is_cut_at_words_into_passages_that_do_not_overlap() -> None:
    text = _numbered(300)  # 2,999 characters
    found = passages_of("Report", text)
    assert 1 < len(found) <= MAX_PASSAGES
    bodies = [p.split("\n", 1)[1] for p in found]
    assert all(len(p) <= PASSAGE_CHARACTERS for p in found)
    assert " ".join(bodies).split() == text.split()


def test_an_overlap_repeats_the_edge_of_the_passage_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(passages, "OVERLAP_CHARACTERS", 100)
    text = _numbered(300)
    found = passages_of("Report", text)
    assert 1 < len(found) <= MAX_PASSAGES
    bodies = [p.split("\n", 1)[1] for p in found]
    assert all(len(p) <= PASSAGE_CHARACTERS for p in found)
    # Every word is in some passage, in order, and neighbours share their edge.
    words = [w for body in bodies for w in body.split()]
    assert sorted(set(words)) == text.split()
    for before, after in itertools.pairwise(bodies):
        shared = set(before.split()) & set(after.split())
        assert shared
        assert len(" ".join(sorted(shared))) <= 100
        assert after.split()[0] in before.split()


def test_only_the_opening_of_a_very_long_message_is_embedded() -> None:
    found = passages_of("Digest", _numbered(20_000))
    assert len(found) == MAX_PASSAGES
    assert found[0].startswith("Digest\nword00000 ")


def test_blobs_and_punctuation_runs_take_no_room() -> None:
    blob = "A" * (LONGEST_WORD + 1)
    assert passages_of("S", f"keep {blob} this ----- ===") == ["S\nkeep this"]


@given(
    subject=st.one_of(st.none(), st.text(max_size=400)),
    text=st.one_of(st.none(), st.text(max_size=12_000)),
)
def test_any_text_gives_bounded_passages(subject: str | None, text: str | None) -> None:
    found = passages_of(subject, text)
    assert len(found) <= MAX_PASSAGES
    assert all(0 < len(p) <= PASSAGE_CHARACTERS for p in found)
