"""Fixtures for the MIME tests."""

from __future__ import annotations

from pathlib import Path

import pytest

_CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


@pytest.fixture(scope="session")
def corpora() -> Path:
    if not (_CORPORA / "messages").is_dir():
        pytest.skip(f"shared corpora not found at {_CORPORA}")
    return _CORPORA
