"""Clients of the test model provider: the official `openai` client and plain HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import openai
import pytest

from servers.model_provider import ModelProvider

TOOL = {
    "type": "function",
    "function": {
        "name": "search_mail",
        "description": "Look up mail.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}


@pytest.fixture
def client(provider: ModelProvider) -> Iterator[openai.OpenAI]:
    """The official client, without its retries so that each call is one request."""
    with openai.OpenAI(
        base_url=provider.base_url, api_key=provider.api_key, max_retries=0, timeout=10.0
    ) as found:
        yield found


@pytest.fixture
def http(provider: ModelProvider) -> Iterator[httpx2.Client]:
    """A plain HTTP client sending the provider's bearer key."""
    with httpx2.Client(
        base_url=provider.base_url,
        headers={"Authorization": f"Bearer {provider.api_key}"},
        timeout=10.0,
    ) as found:
        yield found
