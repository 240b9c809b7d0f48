"""The compact vectors and the exact scan over them, without a store."""

from __future__ import annotations

import numpy as np

from mailfathom.adapters.vectors.codec import as_int8, decode, encode
from mailfathom.adapters.vectors.scan import Ranking, VectorMatrix, unit_query


def _matrix(rows: list[tuple[int, list[float]]], dimension: int = 3) -> VectorMatrix:
    matrix = VectorMatrix(dimension)
    encoded = [encode(v) for _, v in rows]
    matrix.extend(
        np.arange(1, len(rows) + 1, dtype=np.int64),
        np.asarray([seq for seq, _ in rows], dtype=np.int64),
        np.ones(len(rows), dtype=np.int64),
        np.asarray([scale for scale, _ in encoded], dtype=np.float32),
        as_int8([octets for _, octets in encoded], dimension),
    )
    return matrix


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
    everything = np.ones(len(matrix), dtype=bool)
    ranking = Ranking(matrix, query, everything)
    assert [seq for seq, _ in ranking.best(10)] == [10, 12, 11, 13]
    assert [seq for seq, _ in ranking.best(2)] == [10, 12]
    without_first = everything.copy()
    without_first[1] = False
    assert [seq for seq, _ in Ranking(matrix, query, without_first).best(1)] == [12]
    assert Ranking(matrix, query, np.zeros(len(matrix), dtype=bool)).best(5) == []
