"""The chat adapter against the test model provider, a real OpenAI-compatible HTTP server:
the wire it writes, the answers it reads, and every failure reported by its kind alone."""

from __future__ import annotations

import json

import pytest

from mailfathom.adapters.chat.openai_chat import OpenAiCompatibleChat, completion_of
from mailfathom.app.answering.lookup import LOOKUP_TOOL
from mailfathom.app.answering.ports import ChatMessage, ChatUnavailable, TokenUsage, ToolCall
from mailfathom.domain.answering import ChatEndpoint, ChatFailure
from servers.model_provider import CHAT, DEFAULT_CHAT_MODEL, ModelProvider

MESSAGES = (
    ChatMessage("system", "You answer questions."),
    ChatMessage("user", "What about the leak?"),
)


def _chat(
    provider: ModelProvider, *, key: str | None = None, timeout: float = 30
) -> OpenAiCompatibleChat:
    endpoint = ChatEndpoint(provider.base_url, DEFAULT_CHAT_MODEL, None, timeout)
    return OpenAiCompatibleChat(endpoint, provider.api_key if key is None else key)


def test_a_text_answer_is_read_with_the_usage_the_provider_counted(provider: ModelProvider) -> None:
    provider.script_chat(
        [
            {
                "content": "The plumber comes on Monday.",
                "usage": {"prompt_tokens": 31, "completion_tokens": 6},
            }
        ]
    )
    completion = _chat(provider).complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert completion.text == "The plumber comes on Monday."
    assert completion.tool_calls == ()
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (31, 6)
    (sent,) = provider.requests(CHAT)
    assert sent["model"] == DEFAULT_CHAT_MODEL
    assert sent["messages"] == [
        {"role": "system", "content": "You answer questions."},
        {"role": "user", "content": "What about the leak?"},
    ]
    assert sent["tool_choice"] == "auto"
    (tool,) = sent["tools"]
    assert tool == {
        "type": "function",
        "function": {
            "name": LOOKUP_TOOL.name,
            "description": LOOKUP_TOOL.description,
            "parameters": LOOKUP_TOOL.parameters,
        },
    }


def test_calls_are_read_and_a_conversation_carrying_their_results_is_accepted(
    provider: ModelProvider,
) -> None:
    provider.script_chat(
        [
            {
                "tool_calls": [
                    {"name": "search_mail", "arguments": {"queryText": "leak"}, "id": "c1"}
                ]
            },
            {"content": "Done."},
        ]
    )
    chat = _chat(provider)
    asked = chat.complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert asked.text is None
    assert asked.tool_calls == (ToolCall("c1", "search_mail", '{"queryText": "leak"}'),)
    assert json.loads(asked.tool_calls[0].arguments) == {"queryText": "leak"}
    follow = (
        *MESSAGES,
        ChatMessage("assistant", None, asked.tool_calls),
        ChatMessage("tool", '{"emails":[]}', tool_call_id="c1"),
    )
    answered = chat.complete(follow, LOOKUP_TOOL, may_call=False)
    assert answered.text == "Done."
    last = provider.exchanges(CHAT)[-1]
    assert last.status == 200
    assert last.body["tool_choice"] == "none"
    assert last.body["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert last.body["messages"][3] == {
        "role": "tool",
        "content": '{"emails":[]}',
        "tool_call_id": "c1",
    }
    assert last.tool_result_chars == len('{"emails":[]}')


@pytest.mark.parametrize(
    ("how", "failure"),
    [
        ("401", ChatFailure.REFUSED),
        ("429", ChatFailure.UNREACHABLE),
        ("500", ChatFailure.UNREACHABLE),
        ("malformed", ChatFailure.NO_TEXT),
    ],
)
def test_a_failed_request_is_reported_by_its_kind(
    provider: ModelProvider, how: str, failure: ChatFailure
) -> None:
    provider.fail(CHAT, how, times=1)
    with pytest.raises(ChatUnavailable) as failed:
        _chat(provider).complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert failed.value.failure is failure
    assert str(failed.value) == f"the chat provider could not answer ({failure.value})"
    assert len(provider.requests(CHAT)) == 1


def test_a_key_the_endpoint_does_not_accept_is_refused(provider: ModelProvider) -> None:
    with pytest.raises(ChatUnavailable) as failed:
        _chat(provider, key="sk-wrong").complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert failed.value.failure is ChatFailure.REFUSED


def test_an_endpoint_that_does_not_answer_in_time_is_unreachable(provider: ModelProvider) -> None:
    provider.fail(CHAT, "timeout", times=1, hold_seconds=20)
    with pytest.raises(ChatUnavailable) as failed:
        _chat(provider, timeout=1).complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert failed.value.failure is ChatFailure.UNREACHABLE


def test_an_endpoint_that_is_down_is_unreachable(provider: ModelProvider) -> None:
    chat = _chat(provider)
    provider.stop()
    with pytest.raises(ChatUnavailable) as failed:
        chat.complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert failed.value.failure is ChatFailure.UNREACHABLE


def test_an_answer_with_neither_text_nor_calls_is_read_as_such(provider: ModelProvider) -> None:
    provider.fail(CHAT, "notext", times=1)
    completion = _chat(provider).complete(MESSAGES, LOOKUP_TOOL, may_call=True)
    assert (completion.text, completion.tool_calls) == (None, ())


def test_usage_a_provider_does_not_report_is_estimated_from_the_characters() -> None:
    document = {
        "choices": [
            {
                "message": {
                    "content": "x" * 40,
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "n", "arguments": {}}}
                    ],
                }
            }
        ]
    }
    completion = completion_of(document, sent_characters=400)
    assert completion.usage == TokenUsage(100, 11)
    assert completion.tool_calls == (ToolCall("c", "n", "{}"),)


@pytest.mark.parametrize(
    "document",
    [
        [],
        {"choices": []},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"content": None, "tool_calls": [{"function": {}}]}}]},
        {"choices": [{"message": {"tool_calls": "search"}}]},
    ],
)
def test_an_answer_that_is_no_chat_completion_is_no_text(document: object) -> None:
    with pytest.raises(ChatUnavailable) as failed:
        completion_of(document, sent_characters=10)
    assert failed.value.failure is ChatFailure.NO_TEXT
