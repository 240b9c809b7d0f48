"""The test provider's `/v1/chat/completions`: scripted turns, usage, and the requests the API
refuses, as the `openai` client and plain HTTP see them."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from servers.model_provider import CHAT, ModelProvider
from servers.model_provider_text import count_tokens, prompt_tokens

from .conftest import TOOL

QUESTION = [
    {"role": "system", "content": "Answer from the mail you look up."},
    {"role": "user", "content": "What did the landlord say about the leak?"},
]


def ask(client: openai.OpenAI, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return client.chat.completions.create(
        model="mf-test-chat",
        messages=messages,  # type: ignore[arg-type]
        tools=[TOOL],  # type: ignore[list-item]
        **extra,
    )


def test_scripted_turns_are_answered_in_order_with_ids_and_finish_reasons(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    provider.script_chat(
        [
            {"tool_calls": [{"name": "search_mail", "arguments": {"query": "leak"}}]},
            {"content": "The landlord reported water damage."},
        ]
    )

    first = ask(client, QUESTION)
    call = first.choices[0].message.tool_calls[0]
    second = ask(
        client,
        [
            *QUESTION,
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "Water damage in the flat."},
        ],
    )

    assert first.choices[0].finish_reason == "tool_calls"
    assert first.choices[0].message.content is None
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert (call.function.name, json.loads(call.function.arguments)) == (
        "search_mail",
        {"query": "leak"},
    )
    assert second.choices[0].finish_reason == "stop"
    assert second.choices[0].message.content == "The landlord reported water damage."
    assert second.choices[0].message.tool_calls is None
    assert first.model == "mf-test-chat"
    assert provider.script_left() == 0


def test_a_turn_may_carry_several_calls_with_given_ids_and_raw_arguments(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    provider.script_chat(
        [
            {
                "tool_calls": [
                    {"name": "search_mail", "arguments": {"query": "a"}, "id": "call_mine"},
                    {"name": "search_mail", "arguments": "{not json"},
                ]
            }
        ]
    )

    calls = ask(client, QUESTION).choices[0].message.tool_calls

    assert calls[0].id == "call_mine"
    assert len({c.id for c in calls}) == 2
    assert calls[1].function.arguments == "{not json"


def test_usage_is_computed_from_the_request_and_the_answer(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    answer_text = "The landlord reported water damage, twice."
    provider.script_chat([{"content": answer_text}])

    answer = ask(client, QUESTION)

    sent = provider.requests(CHAT)[0]
    assert answer.usage is not None
    assert answer.usage.prompt_tokens == prompt_tokens(sent)
    assert answer.usage.prompt_tokens > count_tokens(QUESTION[1]["content"])
    assert answer.usage.completion_tokens == count_tokens(answer_text)
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + count_tokens(answer_text)


def test_a_turn_can_report_its_own_usage(client: openai.OpenAI, provider: ModelProvider) -> None:
    provider.script_chat(
        [{"content": "Short.", "usage": {"prompt_tokens": 90_000, "completion_tokens": 7}}]
    )

    usage = ask(client, QUESTION).usage

    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (
        90_000,
        7,
        90_007,
    )


def test_max_completion_tokens_cuts_the_answer_with_finish_reason_length(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    provider.script_chat([{"content": "one two three four five six"}])

    answer = ask(client, QUESTION, max_completion_tokens=3)

    assert answer.choices[0].message.content == "one two three"
    assert answer.choices[0].finish_reason == "length"
    assert answer.usage is not None
    assert answer.usage.completion_tokens == 3


def test_a_streamed_answer_joins_back_into_the_same_message(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    turn = {
        "content": "The landlord, Mr. Novák, wrote:  water damage!",
        "tool_calls": [
            {"name": "search_mail", "arguments": {"query": "leak"}},
            {"name": "search_mail", "arguments": {}},
        ],
    }
    provider.script_chat([turn, turn])

    whole = ask(client, QUESTION)
    chunks = list(ask(client, QUESTION, stream=True, stream_options={"include_usage": True}))

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            call["name"] += (delta.function and delta.function.name) or ""
            call["arguments"] += (delta.function and delta.function.arguments) or ""
    message = whole.choices[0].message
    assert text == message.content
    assert [(c["name"], c["arguments"]) for c in calls.values()] == [
        (call.function.name, call.function.arguments) for call in message.tool_calls
    ]
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_echo_is_the_mode_once_the_script_is_spent(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    answer = ask(client, QUESTION)

    assert answer.choices[0].message.content == QUESTION[1]["content"]
    assert answer.choices[0].finish_reason == "stop"


def _conversation_with_call(call_id: str = "call_1") -> list[dict[str, Any]]:
    return [
        *QUESTION,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "search_mail", "arguments": "{}"},
                }
            ],
        },
    ]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": QUESTION}, "model"),
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "messages.[0].role"),
        (
            {"model": "m", "messages": [*QUESTION, {"role": "tool", "tool_call_id": "x"}]},
            "messages.[2].role",
        ),
        ({"model": "m", "messages": _conversation_with_call()}, "messages.[2].role"),
        (
            {
                "model": "m",
                "messages": [*_conversation_with_call(), {"role": "user", "content": "and?"}],
            },
            "messages.[3].role",
        ),
        ({"model": "m", "messages": QUESTION, "tool_choice": "auto"}, "tool_choice"),
        (
            {
                "model": "m",
                "messages": QUESTION,
                "tools": [TOOL],
                "tool_choice": {"type": "function", "function": {"name": "send_email"}},
            },
            "tool_choice",
        ),
    ],
)
def test_requests_the_api_refuses_are_refused_with_its_error(
    http: httpx2.Client, body: dict[str, Any], param: str
) -> None:
    answer = http.post("/chat/completions", json=body)

    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert answer.json()["error"]["param"] == param


def test_a_scripted_turn_can_fail_its_request(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    provider.script_chat([{"fail": "500"}, {"content": "after the failure"}])

    with pytest.raises(openai.InternalServerError):
        ask(client, QUESTION)
    answer = ask(client, QUESTION)

    assert answer.choices[0].message.content == "after the failure"


def test_a_script_is_checked_when_it_is_set(provider: ModelProvider) -> None:
    with pytest.raises(RuntimeError, match="400"):
        provider.script_chat([{"says": "hello"}])
    with pytest.raises(RuntimeError, match="400"):
        provider.script_chat([{}])


def test_records_keep_each_body_and_the_tool_result_characters(
    client: openai.OpenAI, provider: ModelProvider
) -> None:
    results = ["Water damage in the flat.", "Second result, longer than the first one."]
    messages: list[dict[str, Any]] = [*QUESTION]
    ask(client, messages)
    for index, text in enumerate(results):
        messages.extend(_conversation_with_call(f"call_{index}")[len(QUESTION) :])
        messages.append({"role": "tool", "tool_call_id": f"call_{index}", "content": text})
        ask(client, messages)

    bodies = provider.requests(CHAT)

    assert len(bodies) == 3
    assert bodies[0]["messages"] == QUESTION
    assert bodies[0]["tools"] == [TOOL]
    assert bodies[2]["messages"] == messages
    assert provider.tool_result_chars() == [0, len(results[0]), len(results[0] + results[1])]
