"""ask_mail over HTTP in the two embedding states a deployment can start in besides
`available`: without an embedding profile (`inactive`: never offered), and with one whose
mail is not yet embedded (`degraded`: offered as soon as `mfctl mailbox embed` has filled
the generation, without a restart)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from answering.results import (
    QUESTION,
    answer_of,
    error_code,
    message_text,
    search_modes,
    wait_until_offered,
)
from answering.served import Served, serve
from servers.model_provider import CHAT, EMBEDDINGS, ModelProvider


@pytest.fixture
def unembedding(provider: ModelProvider, tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, provider, embeddings=False)


@pytest.fixture
def not_yet_embedded(provider: ModelProvider, tmp_path: Path) -> Iterator[Served]:
    yield from serve(tmp_path, provider, embedded=False)


def test_a_deployment_embedding_no_mail_never_offers_ask_mail(
    unembedding: Served, provider: ModelProvider
) -> None:
    assert search_modes(unembedding) == ("lexical", "inactive")
    assert "search_emails" in unembedding.tools()
    assert "ask_mail" not in unembedding.tools()
    refused = unembedding.ask({"question": QUESTION})
    assert error_code(refused) == 56001
    assert "it embeds no mail" in message_text(refused)
    assert provider.requests(CHAT) == []
    assert provider.requests(EMBEDDINGS) == []


def test_ask_mail_is_offered_once_the_stored_mail_is_embedded_without_a_restart(
    not_yet_embedded: Served, provider: ModelProvider
) -> None:
    served = not_yet_embedded
    assert served.process is not None
    serving = served.process.pid
    assert search_modes(served)[1] == "degraded"
    assert "ask_mail" not in served.tools()
    refused = served.ask({"question": QUESTION})
    assert error_code(refused) == 56001
    assert "cannot now" in message_text(refused)
    assert provider.requests(CHAT) == []
    printed = served.embed()
    assert "messages are embedded" in printed
    assert provider.requests(EMBEDDINGS)
    wait_until_offered(served)
    provider.script_chat([{"content": "Embedded and answered."}])
    answered = answer_of(served.ask({"question": QUESTION}))
    assert answered["answer"] == "Embedded and answered."
    assert served.process is not None
    assert served.process.pid == serving
