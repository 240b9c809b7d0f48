"""Failures of the test provider on demand, its bearer key, its model list, and its process."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest

from servers._common import pid_alive
from servers.model_provider import CHAT, EMBEDDINGS, MODELS, ModelProvider

QUESTION = [{"role": "user", "content": "What did the landlord say?"}]
BODIES: dict[str, dict[str, Any] | None] = {
    EMBEDDINGS: {"model": "m", "input": "text"},
    CHAT: {"model": "m", "messages": QUESTION},
    MODELS: None,
}


def call(http: httpx2.Client, endpoint: str, **options: Any) -> httpx2.Response:
    body = BODIES[endpoint]
    if body is None:
        return http.get(f"/{endpoint}", **options)
    return http.post(f"/{endpoint}", json=body, **options)


def calls(client: openai.OpenAI) -> dict[str, Callable[[], Any]]:
    return {
        EMBEDDINGS: lambda: client.embeddings.create(model="m", input="text"),
        CHAT: lambda: client.chat.completions.create(model="m", messages=QUESTION),  # type: ignore[arg-type]
        MODELS: lambda: client.models.list(),
    }


ENDPOINTS = [EMBEDDINGS, CHAT, MODELS]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    ("how", "status", "error_type", "code", "raised"),
    [
        ("401", 401, "invalid_request_error", "invalid_api_key", openai.AuthenticationError),
        ("429", 429, "requests", "rate_limit_exceeded", openai.RateLimitError),
        ("500", 500, "server_error", None, openai.InternalServerError),
    ],
)
def test_error_failures_answer_openai_error_json_for_the_times_asked(
    provider: ModelProvider,
    http: httpx2.Client,
    client: openai.OpenAI,
    endpoint: str,
    how: str,
    status: int,
    error_type: str,
    code: str | None,
    raised: type[openai.APIStatusError],
) -> None:
    provider.fail(endpoint, how, times=2)

    first = call(http, endpoint)
    with pytest.raises(raised) as second:
        calls(client)[endpoint]()
    third = call(http, endpoint)

    assert first.status_code == status
    assert first.json()["error"]["type"] == error_type
    assert first.json()["error"]["code"] == code
    assert set(first.json()["error"]) == {"message", "type", "param", "code"}
    assert second.value.status_code == status
    assert third.status_code == 200
    assert [e.status for e in provider.exchanges(endpoint)] == [status, status, 200]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_a_failure_without_times_lasts_until_reset(
    provider: ModelProvider, http: httpx2.Client, endpoint: str
) -> None:
    provider.fail(endpoint, "500")

    answers = [call(http, endpoint).status_code for _ in range(3)]
    provider.reset()

    assert answers == [500, 500, 500]
    assert call(http, endpoint).status_code == 200


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_malformed_answers_are_200_with_a_body_that_is_not_json(
    provider: ModelProvider, http: httpx2.Client, client: openai.OpenAI, endpoint: str
) -> None:
    provider.fail(endpoint, "malformed", times=2)

    answer = call(http, endpoint)
    with pytest.raises(json.JSONDecodeError):
        calls(client)[endpoint]()

    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        json.loads(answer.text)


def test_notext_answers_a_chat_completion_without_content_or_calls(
    provider: ModelProvider, client: openai.OpenAI
) -> None:
    provider.script_chat([{"content": "kept for later"}])
    provider.fail(CHAT, "notext", times=1)

    empty = client.chat.completions.create(model="m", messages=QUESTION)  # type: ignore[arg-type]
    kept = client.chat.completions.create(model="m", messages=QUESTION)  # type: ignore[arg-type]

    assert empty.choices[0].message.content is None
    assert empty.choices[0].message.tool_calls is None
    assert empty.choices[0].finish_reason == "stop"
    assert kept.choices[0].message.content == "kept for later"


@pytest.mark.parametrize("endpoint", [EMBEDDINGS, MODELS])
def test_notext_answers_embeddings_and_models_with_empty_data(
    provider: ModelProvider, http: httpx2.Client, endpoint: str
) -> None:
    provider.fail(endpoint, "notext", times=1)

    answer = call(http, endpoint)

    assert answer.status_code == 200
    assert answer.json()["data"] == []


def test_a_failed_request_uses_up_no_scripted_turn(
    provider: ModelProvider, client: openai.OpenAI
) -> None:
    provider.script_chat([{"content": "the only turn"}])
    provider.fail(CHAT, "500", times=1)

    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=QUESTION)  # type: ignore[arg-type]
    answer = client.chat.completions.create(model="m", messages=QUESTION)  # type: ignore[arg-type]

    assert answer.choices[0].message.content == "the only turn"


def test_a_timeout_holds_the_request_past_the_clients_patience(
    provider: ModelProvider,
) -> None:
    provider.fail(EMBEDDINGS, "timeout", times=1, hold_seconds=60)
    impatient = openai.OpenAI(
        base_url=provider.base_url, api_key=provider.api_key, max_retries=0, timeout=0.5
    )

    with impatient, pytest.raises(openai.APITimeoutError):
        impatient.embeddings.create(model="m", input="text")

    assert [e.status for e in provider.exchanges(EMBEDDINGS)] == [None]


def test_a_held_request_is_answered_as_usual_once_the_hold_ends(
    provider: ModelProvider, http: httpx2.Client
) -> None:
    provider.fail(CHAT, "timeout", times=1, hold_seconds=0.5)

    answer = call(http, CHAT)

    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == QUESTION[0]["content"]


def test_reset_answers_every_held_request_at_once(
    provider: ModelProvider, http: httpx2.Client
) -> None:
    provider.fail(EMBEDDINGS, "timeout", hold_seconds=600)
    answers: list[httpx2.Response] = []
    waiting = threading.Thread(target=lambda: answers.append(call(http, EMBEDDINGS)))
    waiting.start()
    while not provider.exchanges(EMBEDDINGS):
        waiting.join(0.05)

    provider.reset()
    waiting.join(30)

    assert not waiting.is_alive()
    assert answers[0].status_code == 503
    assert answers[0].json()["error"]["type"] == "server_error"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer sk-wrong"}, {"Authorization": "Basic c2stdGVzdA=="}],
)
def test_requests_without_the_bearer_key_are_refused_with_401(
    provider: ModelProvider, endpoint: str, headers: dict[str, str]
) -> None:
    with httpx2.Client(base_url=provider.base_url, headers=headers, timeout=10.0) as anonymous:
        answer = call(anonymous, endpoint)

    assert answer.status_code == 401
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert provider.api_key not in answer.text
    assert [e.status for e in provider.exchanges(endpoint)] == [401]


def test_the_official_client_with_a_wrong_key_gets_an_authentication_error(
    provider: ModelProvider,
) -> None:
    with (
        openai.OpenAI(base_url=provider.base_url, api_key="sk-wrong", max_retries=0) as wrong,
        pytest.raises(openai.AuthenticationError) as refused,
    ):
        wrong.embeddings.create(model="m", input="text")

    assert refused.value.code == "invalid_api_key"


def test_models_are_listed_and_retrieved_and_an_unknown_one_is_not_found(
    provider: ModelProvider, client: openai.OpenAI
) -> None:
    provider.set_chat_models(["chat-a", "chat-b"])

    listed = [model.id for model in client.models.list()]
    one = client.models.retrieve("chat-b")
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("chat-c")

    assert listed == ["mf-test-embedding", "chat-a", "chat-b"]
    assert (one.id, one.object) == ("chat-b", "model")
    assert missing.value.code == "model_not_found"


def test_an_unknown_route_is_answered_as_the_api_does(http: httpx2.Client) -> None:
    answer = http.post("/completions", json={"model": "m", "prompt": "x"})

    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "invalid_request_error"


def test_the_provider_binds_loopback_and_stops_by_its_pid() -> None:
    with ModelProvider(embedding_model="own", dimension=8) as own:
        pid = own.pid
        base_url = own.base_url
        with httpx2.Client(
            headers={"Authorization": f"Bearer {own.api_key}"}, timeout=10.0
        ) as http:
            found = http.post(f"{base_url}/embeddings", json={"model": "m", "input": "x"})
        assert base_url.startswith("http://127.0.0.1:")
        assert base_url.endswith("/v1")
        assert (found.json()["model"], len(found.json()["data"][0]["embedding"])) == ("own", 8)

    assert pid is not None
    assert not pid_alive(pid)
    with pytest.raises(httpx2.TransportError):
        httpx2.get(f"{base_url}/models", timeout=5.0)


def test_a_stopped_provider_is_unreachable_until_it_starts_again_on_the_same_address(
    provider: ModelProvider, http: httpx2.Client
) -> None:
    base_url, key = provider.base_url, provider.api_key
    provider.set_chat_mode("runaway")

    provider.stop()
    with pytest.raises(httpx2.ConnectError):
        call(http, EMBEDDINGS)
    provider.start()
    answer = call(http, CHAT)

    assert (provider.base_url, provider.api_key) == (base_url, key)
    assert answer.status_code == 200
    assert answer.json()["choices"][0]["message"]["content"] == QUESTION[0]["content"]


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": QUESTION, "tools": [{"type": "function"}]},
        {"model": "m", "messages": QUESTION, "tools": "search"},
        {
            "model": "m",
            "messages": [
                *QUESTION,
                {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "x"}}]},
            ],
        },
        {"model": "m", "messages": [*QUESTION, {"role": "assistant", "tool_calls": "x"}]},
    ],
)
def test_malformed_tools_and_calls_are_refused_with_400_not_a_fault(
    http: httpx2.Client, body: dict[str, Any]
) -> None:
    answer = http.post("/chat/completions", json=body)

    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"


def test_an_input_longer_than_the_models_context_is_refused(
    provider: ModelProvider, http: httpx2.Client
) -> None:
    provider.set_embedding_model("small", 16, max_input_tokens=5)

    fits = http.post("/embeddings", json={"model": "m", "input": ["one two three four five"]})
    too_long = http.post(
        "/embeddings", json={"model": "m", "input": ["fine", "one two three four five six"]}
    )

    assert fits.status_code == 200
    assert too_long.status_code == 400
    assert too_long.json()["error"]["param"] == "input"
