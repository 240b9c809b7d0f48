"""The page of a hybrid search: the vector ranking is started before the lexical one is read,
and only the page's rows are read, with every message tied with the page's last, so that
ties are ordered newest received first over all of them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import cast

from mailfathom.app.reading.search_emails import _ranked
from mailfathom.app.shared.query_placement import Placement
from mailfathom.app.shared.stored_mail import SummaryFilter, SummaryRow
from mailfathom.app.shared.stored_mail_ports import MailboxReadView
from mailfathom.app.shared.vector_ports import Nearest
from mailfathom.domain.embedding import SemanticState

START = datetime(2026, 3, 1, tzinfo=UTC)
SELECTION = SummaryFilter(folder_ids=(1,))
PLACED = Placement((1.0, 0.0), "space", SemanticState.AVAILABLE)


class _Done:
    def __init__(self, found: list[Nearest], calls: list[str]) -> None:
        self._found = found
        self._calls = calls

    def result(self) -> list[Nearest]:
        self._calls.append("nearest result")
        return self._found


class _View:
    """Two rankings as given; each message received on day `seq`; `gone` no longer in the
    folders."""

    def __init__(self, lexical: list[int], nearest: list[int], gone: Sequence[int] = ()) -> None:
        self.lexical = lexical
        self.nearest = nearest
        self.gone = set(gone)
        self.calls: list[str] = []
        self.read: list[list[int]] = []

    def start_nearest(
        self, generation: str, vector: Sequence[float], eligible: SummaryFilter, window: int
    ) -> _Done:
        self.calls.append("nearest started")
        return _Done([Nearest(seq, 0.5) for seq in self.nearest], self.calls)

    def ranking(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        self.calls.append("lexical ranking")
        return [(seq, 1.0) for seq in self.lexical]

    def summaries_of(self, seqs: Sequence[int], selection: SummaryFilter) -> dict[int, SummaryRow]:
        self.read.append(list(seqs))
        return {
            seq: cast(SummaryRow, SimpleNamespace(received_at=START + timedelta(days=seq)))
            for seq in seqs
            if seq not in self.gone
        }

    def indexed_texts(self, seqs: Sequence[int], folder_ids: Sequence[int]) -> dict[int, str]:
        return dict.fromkeys(seqs, "")


def _page(view: _View, limit: int) -> list[int]:
    rows = _ranked(cast(MailboxReadView, view), SELECTION, ["w"], limit, PLACED)
    return [cast(SimpleNamespace, row.summary).received_at.day - START.day for row in rows]


def test_the_nearest_ranking_is_under_way_while_the_lexical_one_is_read() -> None:
    view = _View([1, 2], [2, 1])
    _page(view, 2)
    assert view.calls == ["nearest started", "lexical ranking", "nearest result"]


def test_ties_at_the_page_s_end_are_all_read_and_the_newest_comes_first() -> None:
    # 1 and 2 each first in one ranking and second in the other: the same score.
    view = _View([1, 2, 3], [2, 1, 4])
    assert _page(view, 1) == [2]
    assert view.read == [[1, 2]]


def test_a_message_gone_from_the_folders_leaves_its_place_to_the_next() -> None:
    view = _View([5, 6, 7], [5, 6, 7], gone=[6])
    assert _page(view, 2) == [5, 7]
    assert view.read == [[5, 6], [7]]
