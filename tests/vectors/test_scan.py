"""The compact vectors and the exact scan over them, without a store."""

from __future__ import annotations

import numpy as np

from mailfathom.adapters.vectors.codec import as_int8, decode, encode
from mailfathom.adapters.vectors.scan import Ranking, VectorMatrix, unit_query


def _matrix(
    rows: list[tuple[int, list[float]]], dimension: int = 3, after: VectorMatrix | None = None
) -> VectorMatrix:
    matrix = VectorMatrix(dimension) if after is None else after
    encoded = [encode(v) for _, v in rows]
    return matrix.extended(
        np.arange(matrix.highest + 1, matrix.highest + len(rows) + 1, dtype=np.int64),
        np.asarray([seq for seq, _ in rows], dtype=np.int64),
        np.ones(len(rows), dtype=np.int64),
        np.asarray([scale for scale, _ in encoded], dtype=np.float32),
        as_int8([octets for _, octets in encoded], dimension),
    )


def _unit(*values: float) -> list[float]:
    vector = np.asarray(values, dtype=np.float64)
    return list(vector / np.linalg.norm(vector))


def test_a_vector_comes_back_within_half_a_step_and_a_zero_vector_stays_zero() -> None:
    vector = [0.6, -0.8, 0.0]
    scale, octets = encode(vector)
    assert len(octets) == 3
    assert np.max(np.abs(decode(scale, octets) - np.asarray(vector))) <= scale / 2 + 1e-7
    assert encode([0.0, 0.0, 0.0]) == (0.0, bytes(3))
    assert not decode(*encode([0.0, 0.0, 0.0])).any()


def test_a_row_of_another_dimension_matches_nothing() -> None:
    rows = as_int8([bytes([1, 2, 3]), bytes([1, 2])], 3)
    assert rows.tolist() == [[1, 2, 3], [0, 0, 0]]
    assert unit_query([1.0, 0.0], 3) is None
    assert unit_query([0.0, 0.0, 0.0], 3) is None


def test_messages_come_off_the_ranking_once_by_their_nearest_passage() -> None:
    matrix = _matrix(
        [
            (10, [0.0, 1.0, 0.0]),
            (10, [1.0, 0.0, 0.0]),
            (11, [0.9, 0.1, 0.0]),
            (12, [0.9, 0.1, 0.0]),
            (13, [0.0, 0.0, 1.0]),
        ]
    )
    query = unit_query([1.0, 0.0, 0.0], 3)
    assert query is not None
    assert matrix.index.seqs.tolist() == [10, 11, 12, 13]
    everything = np.ones(len(matrix.index), dtype=bool)
    ranking = Ranking([(matrix, everything)], query)
    assert ranking.exact
    assert [seq for seq, _ in ranking.best(10)] == [10, 12, 11, 13]
    assert [seq for seq, _ in ranking.best(2)] == [10, 12]
    without_first = everything.copy()
    without_first[0] = False
    assert [seq for seq, _ in Ranking([(matrix, without_first)], query).best(1)] == [12]
    assert Ranking([(matrix, np.zeros(len(matrix.index), dtype=bool))], query).best(5) == []


def test_over_many_messages_the_pooled_vectors_pick_whose_passages_are_compared() -> None:
    matrix = _matrix(
        [
            # 20: one passage near the query among three far ones; its mean is far.
            (20, _unit(1, 0, 0)),
            (20, _unit(0, 1, 0)),
            (20, _unit(0, 0, 1)),
            (20, _unit(0, -1, 0.2)),
            (21, _unit(0.8, 0.6, 0)),
            (22, _unit(0.6, 0.8, 0)),
            (23, _unit(0.7, 0, 0.7)),
        ]
    )
    query = unit_query([1.0, 0.0, 0.0], 3)
    assert query is not None
    everything = np.ones(len(matrix.index), dtype=bool)
    exact = Ranking([(matrix, everything)], query).best(4)
    assert [seq for seq, _ in exact] == [20, 21, 23, 22]
    pooled = Ranking([(matrix, everything)], query, exact_up_to=0, candidates=2, per_message=1)
    assert not pooled.exact
    # The two nearest by their pooled vectors are 21 and 23, scored by their passages;
    # a deeper ranking compares more messages' passages.
    best = pooled.best(1)
    assert [seq for seq, _ in best] == [21]
    assert best[0][1] == exact[1][1]
    assert pooled.best(4) == exact


def test_messages_held_in_several_matrices_rank_as_one() -> None:
    """The messages of the pooled test above, held in two matrices (as two accounts' are):
    the candidates are picked by pooled vector over both, so the answers are the same."""
    first = _matrix(
        [
            (20, _unit(1, 0, 0)),
            (20, _unit(0, 1, 0)),
            (20, _unit(0, 0, 1)),
            (20, _unit(0, -1, 0.2)),
            (22, _unit(0.6, 0.8, 0)),
        ]
    )
    second = _matrix([(21, _unit(0.8, 0.6, 0)), (23, _unit(0.7, 0, 0.7)), (24, _unit(1, 0, 0))])
    query = unit_query([1.0, 0.0, 0.0], 3)
    assert query is not None
    # 24 is the nearest of all, but not allowed.
    parts = [(first, np.ones(2, dtype=bool)), (second, np.asarray([True, True, False]))]
    exact = Ranking(parts, query).best(4)
    assert [seq for seq, _ in exact] == [20, 21, 23, 22]
    pooled = Ranking(parts, query, exact_up_to=0, candidates=2, per_message=1)
    assert not pooled.exact
    assert [seq for seq, _ in pooled.best(1)] == [21]
    assert pooled.best(4) == exact
    assert Ranking([(first, np.zeros(2, dtype=bool)), *parts[1:]], query).best(5) == exact[1:3]


def test_an_extension_makes_a_new_snapshot_and_keeps_each_message_s_passages_together() -> None:
    first = _matrix([(30, _unit(1, 0, 0)), (31, _unit(0, 1, 0))])
    second = _matrix(
        [(32, _unit(0, 0, 1)), (33, _unit(1, 1, 0)), (32, _unit(1, 0, 0))], after=first
    )
    assert len(first) == 2
    assert first.index.seqs.tolist() == [30, 31]
    assert second.index.seqs.tolist() == [30, 31, 32, 33]
    rows, starts = second.index.rows_of(np.asarray([2, 0], dtype=np.int64))
    assert rows.tolist() == [2, 4, 0]
    assert starts.tolist() == [0, 2]
    # Rows of a message already indexed (a snapshot that saw part of a commit) make the
    # index again, whole.
    third = _matrix([(31, _unit(0, 0, 1))], after=second)
    assert third.index.seqs.tolist() == [30, 31, 32, 33]
    assert third.index.counts.tolist() == [1, 2, 2, 1]
    query = unit_query([0.0, 0.0, 1.0], 3)
    assert query is not None
    ranked = Ranking([(third, np.ones(4, dtype=bool))], query).best(2)
    assert [seq for seq, _ in ranked] == [32, 31]
