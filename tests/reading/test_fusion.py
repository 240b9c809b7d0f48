"""Reciprocal rank fusion: agreement first, one ranking alone still counts, deterministic."""

from __future__ import annotations

import math

from mailfathom.app.reading.fusion import RRF_K, fused_scores, fusion_depth, lexical_depth


def test_a_message_both_rankings_hold_outranks_one_either_holds_higher() -> None:
    scores = fused_scores([1, 2, 3], [3, 4, 1])
    assert max(scores, key=lambda s: scores[s]) in {1, 3}
    assert scores[3] > scores[2]
    assert scores[1] > scores[4]
    assert math.isclose(scores[1], 1 / (RRF_K + 1) + 1 / (RRF_K + 3))
    assert math.isclose(scores[4], 1 / (RRF_K + 2))


def test_a_message_listed_twice_counts_at_its_first_position_only() -> None:
    assert fused_scores([7, 7, 8]) == {7: 1 / (RRF_K + 1), 8: 1 / (RRF_K + 3)}


def test_one_empty_ranking_leaves_the_other_s_order() -> None:
    scores = fused_scores([5, 6, 7], [])
    assert sorted(scores, key=lambda s: -scores[s]) == [5, 6, 7]
    assert fused_scores([], []) == {}


def test_each_ranking_is_read_deeper_than_the_page() -> None:
    assert fusion_depth(1) == 30
    assert fusion_depth(20) == 60
    assert fusion_depth(50) == 150


def test_the_lexical_ranking_is_read_two_pages_deep() -> None:
    assert lexical_depth(1) == 20
    assert lexical_depth(20) == 40
    assert lexical_depth(50) == 100
