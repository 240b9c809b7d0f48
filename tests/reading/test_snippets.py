"""Search extracts: what they show, and that folding a body a prefix at a time changes
nothing about them."""

from __future__ import annotations

import random
import re

import pytest

from mailfathom.app.reading import snippets
from mailfathom.app.reading.snippets import MAX_SNIPPETS, SNIPPET_CHARACTERS, extracts, query_terms


def _reference(body: str, terms: list[str]) -> tuple[str, ...]:
    """The plain reading of the rules: fold the whole body, find every match, cut windows."""
    if not body or not terms:
        return ()
    text = re.sub(r"\s+", " ", body).strip()
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE
    )
    spans = [m.span() for m in pattern.finditer(text)]
    result: list[str] = []
    covered = -1
    for start, _end in spans:
        if start < covered:
            continue
        lo = max(0, start - 50)
        hi = min(len(text), lo + SNIPPET_CHARACTERS)
        inside = [(s, e) for s, e in spans if s >= lo and e <= hi]
        result.append(snippets._mark(text, lo, hi, inside))
        covered = hi
        if len(result) == MAX_SNIPPETS:
            break
    return tuple(result)


def test_an_extract_marks_the_match_folds_space_and_marks_both_cuts() -> None:
    body = "x" * 300 + " the   quarterly\n\n review is due " + "y" * 300
    (only,) = extracts(body, query_terms(["Review"]))
    assert "**review**" in only
    assert "  " not in only
    assert "\n" not in only
    assert only.startswith("…")
    assert only.endswith("…")
    assert len(only) <= SNIPPET_CHARACTERS + 2 + 4


def test_adjacent_matches_become_one_marked_run_and_at_most_three_extracts_come_back() -> None:
    body = " ".join((["budget review"] + ["filler"] * 60) * 10)
    found = extracts(body, query_terms(["budget", "review"]))
    assert len(found) == MAX_SNIPPETS
    assert all("**budget review**" in f for f in found)


def test_a_word_is_matched_whole_and_nothing_is_found_in_a_body_without_it() -> None:
    assert extracts("reviewed and previews", query_terms(["review"])) == ()
    assert extracts("", query_terms(["review"])) == ()
    assert extracts("anything", []) == ()


def test_matches_past_the_first_prefix_and_across_its_cut_are_found_as_in_the_whole_body() -> None:
    # "reviewer" straddles the first cut: its first letters alone must not count as "review".
    cut = snippets._FIRST_PREFIX
    body = "a " * ((cut - 4) // 2) + "reviewer " + "b " * 3000 + "review " + "c " * 10
    assert extracts(body, ["review"]) == _reference(body, ["review"])
    assert len(extracts(body, ["review"])) == 1


@pytest.mark.parametrize("seed", range(40))
def test_extracts_agree_with_folding_the_whole_body(seed: int) -> None:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "review", "reviewer", "Budget", "ÜBERPRÜFUNG", "x_review"]
    if seed % 5 == 0:
        words.append("İstanbul")  # lower-cases to one character more
    spaces = [" ", "  ", "\n", "\r\n\r\n", "\t", " " * 200, "\n" * 3000]
    pieces: list[str] = []
    for _ in range(rng.randrange(0, 6000)):
        pieces.append(rng.choice(words))
        pieces.append(rng.choice(spaces) if rng.random() < 0.3 else " ")
    body = ("  " if seed % 2 else "") + "".join(pieces)
    asked = ["review", "budget", "gamma", "zzz", "Überprüfung"]
    terms = query_terms(rng.sample(asked, rng.randrange(1, 4)))
    assert extracts(body, terms) == _reference(body, terms)


def test_a_body_whose_few_matches_lie_early_gives_what_folding_it_whole_gives() -> None:
    # One or two matches near the start, a long tail without any, and a word at the first
    # cut that begins like the term: the tail is not needed, the cut word must not count.
    cut = snippets._FIRST_PREFIX
    for head in ("review " + "a " * 40, "review " + "a " * 40 + "Review " + "b " * 30):
        body = head + "c " * ((cut - len(head) - 3) // 2) + "reviewer " + "d " * 20_000
        assert extracts(body, ["review"]) == _reference(body, ["review"])
        body = head + "e " * 20_000 + "review end"
        assert extracts(body, ["review"]) == _reference(body, ["review"])


def test_the_last_match_of_a_body_is_found_from_its_end() -> None:
    assert snippets._last_end("review reviewer x_review previews", ["review"]) == 6
    assert snippets._last_end("a review. b REVIEW", ["review", "b"]) == 18
    assert snippets._last_end("b review", ["review", "b"]) == 8
