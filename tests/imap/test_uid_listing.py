"""Sizing UID windows and reading the server's sequence-sets within them."""

from __future__ import annotations

import itertools

import pytest

from mailfathom.adapters.imap.uid_listing import uids_in_set, window_span, windows


def test_windows_cover_the_range_once_and_each_answer_fits_the_budget() -> None:
    found = list(windows(999_990, 1_200_000, 5_000))
    assert found[0][0] == 999_990
    assert found[-1][1] == 1_200_000
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(found))
    # Every UID named, seven digits and a separator each, with the line's other words.
    assert all((end - start + 1) * 8 + 128 <= 5_000 for start, end in found)
    assert window_span(5_000, 1_200_000) == (5_000 - 128) // 8


def test_a_set_is_clipped_to_the_window_before_it_is_expanded() -> None:
    assert uids_in_set("1:4294967295", 10, 12, 3) == [10, 11, 12]
    assert uids_in_set("5,9:7,20", 6, 19, 10) == [7, 8, 9]


def test_a_set_naming_more_than_the_window_could_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="more UIDs than the window holds"):
        uids_in_set("1:5,7:9", 1, 100, 6)
