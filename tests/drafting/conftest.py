"""The drafting tests reuse the store's backends: the SQLite file and PostgreSQL."""

from __future__ import annotations

from store.conftest import engine as engine

__all__ = ["engine"]
