"""The demo as a user starts it finds mail by meaning from its first search, and offers
ask_mail only when it was given a chat endpoint: the demo command run as a process, its
endpoint read with the official MCP client over HTTP, and the chat endpoint a real
OpenAI-compatible server on loopback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all, register_headers
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mcp_tests.client import call, structured, text, tool_names
from mcp_tests.deployment import _free_port, _wait_for_port
from servers._common import terminate
from servers.model_provider import CHAT, DEFAULT_CHAT_MODEL, ModelProvider

MESSAGES = 12
QUERY = "what customers told us"
QUESTION = "What was decided about the offsite budget?"
KEY_VARIABLE = "DEMO_TEST_CHAT_KEY"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo deployment made (generated, synchronized, embedded) without serving."""
    for sample in generate_mailbox(MESSAGES):
        register_headers(sample.raw)
    register_all([QUERY, QUESTION])
    home = tmp_path_factory.mktemp("demo") / "demo"
    made = subprocess.run(
        [sys.executable, "-m", "mailfathom", "demo", "--no-serve", "--data-dir", str(home),
         "--messages", str(MESSAGES)],
        capture_output=True, text=True, cwd=home.parent, timeout=900, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    embedded = re.search(r"(\d+) of (\d+) messages are embedded", " ".join(made.stdout.split()))
    assert embedded is not None, made.stdout
    assert embedded[1] == embedded[2] != "0"
    return home


@contextmanager
def served(home: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """The demo on `home` served with `options`; yields its endpoint."""
    port = _free_port()
    log_path = home.parent / f"served-{port}.log"
    with log_path.open("wb") as log:
        demo = subprocess.Popen(
            [sys.executable, "-m", "mailfathom", "demo", "--data-dir", str(home),
             "--port", str(port), *options],
            stdout=log, stderr=log, env={**os.environ, **(env or {})}, cwd=home.parent,
            start_new_session=True,
        )  # fmt: skip
    try:
        _wait_for_port(port, demo, timeout=300)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        terminate(demo, grace=30)


def _key(home: Path) -> str:
    return (home / "demo-api-key").read_text("ascii").strip()


def _search(url: str, key: str, **arguments: Any) -> dict[str, Any]:
    return structured(call(url, key, "search_emails", {"queryText": QUERY, **arguments}))


def _ids(found: Sequence[dict[str, Any]]) -> list[str]:
    return [each["storedEmailId"] for each in found]


def test_the_demo_searches_by_meaning_and_offers_no_ask_mail_without_a_chat_endpoint(
    home: Path,
) -> None:
    with served(home) as url:
        key = _key(home)
        found = _search(url, key)
        assert (found["retrievalMode"], found["semanticSearch"]) == ("hybrid", "available")
        assert found["matches"]
        listed = tool_names(url, key)
        assert "search_emails" in listed
        assert "ask_mail" not in listed
    assert "[Answering]" not in (home / "mailfathom.toml").read_text("utf-8")


def test_the_demo_given_a_chat_endpoint_offers_ask_mail_and_answers_with_citations(
    home: Path, provider: ModelProvider
) -> None:
    options = ("--chat-url", provider.base_url, "--chat-model", DEFAULT_CHAT_MODEL,
               "--chat-key-env", KEY_VARIABLE)  # fmt: skip
    with served(home, *options, env={KEY_VARIABLE: provider.api_key}) as url:
        key = _key(home)
        assert "ask_mail" in tool_names(url, key)
        provider.script_chat(
            [
                {"tool_calls": [{"name": "search_mail", "arguments": {"queryText": QUERY}}]},
                {"content": "The offsite budget is to be reviewed before Friday [E1]."},
            ]
        )
        result = call(url, key, "ask_mail", {"question": QUESTION})
        assert not result.is_error, text(result)
        asked = result.structured_content
        assert asked is not None
        looked_up = _search(url, key)
    assert asked["answer"] == "The offsite budget is to be reviewed before Friday [E1]."
    assert asked["citations"]
    cited = _ids(asked["citations"])
    assert cited == _ids([m["summary"] for m in looked_up["matches"]])[: len(cited)]
    assert all(c["accountId"] in ("demo", "colleague") for c in asked["citations"])
    assert len(provider.requests(CHAT)) == 2
    config = (home / "mailfathom.toml").read_text("utf-8")
    assert f'ApiKey = {{ Env = "{KEY_VARIABLE}" }}' in config
    assert provider.api_key not in config


@pytest.mark.parametrize(
    "options",
    [
        ["--chat-url", "http://127.0.0.1:11434/v1"],
        ["--chat-model", "qwen2.5:7b"],
        ["--chat-key-env", KEY_VARIABLE],
    ],
)
def test_a_chat_endpoint_is_named_whole_or_not_at_all(tmp_path: Path, options: list[str]) -> None:
    refused = subprocess.run(
        [sys.executable, "-m", "mailfathom", "demo", "--no-serve", "--data-dir",
         str(tmp_path / "demo"), *options],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "--chat-url and --chat-model go together" in " ".join(refused.stderr.split())
    assert not (tmp_path / "demo").exists()
