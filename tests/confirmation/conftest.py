"""Fixtures of the confirmation tests: a migrated store on each backend, and the ports of
each backend the contracts run on (the in-memory fakes among them)."""

from __future__ import annotations

from store.conftest import backend as backend
from store.conftest import engine as engine

__all__ = ["backend", "engine"]
