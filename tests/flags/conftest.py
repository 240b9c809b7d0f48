"""The mutation store runs on every backend, like the rest of the store: SQLite,
PostgreSQL, and the in-memory fake for the port contracts."""

from __future__ import annotations

from store.conftest import backend as backend
from store.conftest import engine as engine
from store.conftest import store as store
