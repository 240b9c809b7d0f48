"""Normalization through each of the two parsing routes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mailfathom.adapters.mime import normalize as normalize_module
from mailfathom.adapters.mime import normalize_message
from mailfathom.adapters.mime.fastparse import parse_fast
from mailfathom.domain.message import NormalizedMessage

Normalize = Callable[[bytes], NormalizedMessage]


@pytest.fixture(params=["fast route", "stdlib parser"])
def normalize_both_ways(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Normalize:
    """`normalize_message`, once with the fast route (which must accept the message) and once
    with the fast route declining, so the stdlib parser builds the tree."""
    if request.param == "stdlib parser":
        monkeypatch.setattr(normalize_module, "parse_fast", lambda _raw: None)
        return normalize_message

    def fast(raw: bytes) -> NormalizedMessage:
        assert parse_fast(raw) is not None, "the fast route declined the message"
        return normalize_message(raw)

    return fast
