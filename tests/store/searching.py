"""Asking the store's lexical index through the search the product runs."""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from mailfathom.adapters.sql.reading import SqlMailboxReader
from mailfathom.app.shared.stored_mail import SummaryFilter


def matching_seqs(engine: sa.Engine, folder_ids: Sequence[int], query: str) -> list[int]:
    """The `seq` of every message in `folder_ids` the search tool's query finds for the
    words of `query` (all required), best first."""
    reader = SqlMailboxReader(engine)
    scope = SummaryFilter(folder_ids=tuple(folder_ids))
    return [row.summary.seq for row in reader.search(scope, query.split(), 10)]
