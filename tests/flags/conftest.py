"""The mutation store runs on every backend, like the rest of the store."""

from __future__ import annotations

from store.conftest import engine as engine
from store.conftest import store as store
