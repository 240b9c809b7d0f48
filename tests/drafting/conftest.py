"""The drafting tests reuse the store's backends: the SQLite file and PostgreSQL, and the
in-memory fakes for the port contracts, under the store's account-scope check."""

from __future__ import annotations

from store.conftest import _account_scoped as _account_scoped
from store.conftest import backend as backend
from store.conftest import engine as engine
from store.conftest import pytest_collection_modifyitems as pytest_collection_modifyitems

__all__ = ["_account_scoped", "backend", "engine", "pytest_collection_modifyitems"]
