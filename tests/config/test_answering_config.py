"""The [Answering] section: no endpoint unless Url and Model are given, the address https
unless on a loopback host, the key a secret reference only, and every bound within its
range."""

from __future__ import annotations

from typing import Any

import pytest

from config.test_config_example import DOCS
from config.test_config_loading import BASE_DIR, imap_account, parse, problems_of
from mailfathom.adapters.config import load_config
from mailfathom.adapters.config.toml_tables import REFERENCE_HINT
from mailfathom.domain.answering import (
    AnsweringConfig,
    ChatEndpoint,
    PeriodLimits,
    QuestionLimits,
)
from mailfathom.domain.config import SecretRef


def with_answering(**answering: Any) -> dict[str, Any]:
    return {"Accounts": [imap_account()], "Answering": answering}


def test_no_section_declares_no_endpoint_and_the_contract_bounds() -> None:
    config = parse({"Accounts": [imap_account()]}).answering
    assert config == AnsweringConfig()
    assert config.endpoint is None
    assert (config.question.mail_characters, config.question.citations) == (20_000, 20)
    assert config.question.answer_characters == 20_000
    assert config.recheck_seconds == 60


def test_the_section_is_read_whole() -> None:
    config = parse(
        with_answering(
            Url="https://llm.example.org/v1/",
            Model="small-model",
            ApiKey={"File": "keys/chat.key"},
            TimeoutSeconds=20,
            RecheckSeconds=5,
            MaxMailCharacters=8000,
            MaxCitations=5,
            MaxAnswerCharacters=3000,
            MaxProviderCalls=4,
            MaxLookups=3,
            MaxQuestionTokens=50_000,
            PeriodHours=1.5,
            MaxRunsPerPeriod=10,
            MaxTokensPerPeriod=200_000,
        )
    ).answering
    assert config == AnsweringConfig(
        endpoint=ChatEndpoint(
            "https://llm.example.org/v1",
            "small-model",
            SecretRef(file=BASE_DIR / "keys/chat.key"),
            20.0,
        ),
        question=QuestionLimits(8000, 5, 3000, 4, 3, 50_000),
        period=PeriodLimits(1.5, 10, 200_000),
        recheck_seconds=5.0,
    )
    assert config.period.seconds == 5400


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:11434/v1", "http://localhost:8080/v1", "http://[::1]:9/v1"]
)
def test_a_model_on_this_machine_may_be_reached_without_tls_or_key(url: str) -> None:
    endpoint = parse(with_answering(Url=url, Model="llama")).answering.endpoint
    assert endpoint == ChatEndpoint(url, "llama", None)


@pytest.mark.parametrize(
    "url",
    [
        "http://llm.example.org/v1",
        "ftp://llm.example.org/v1",
        "https://user:pw@llm.example.org/v1",
        "https://llm.example.org/v1?key=1",
        "llm.example.org",
    ],
)
def test_an_address_mail_would_cross_a_network_in_clear_or_oddly_is_refused(url: str) -> None:
    assert problems_of(with_answering(Url=url, Model="m")) == [
        "Answering.Url: must be an absolute https:// address with a host and no user, query "
        "or fragment (http:// only on a loopback host)"
    ]


def test_a_key_written_in_the_file_is_refused() -> None:
    problems = problems_of(
        with_answering(Url="https://llm.example.org/v1", Model="m", ApiKey="sk-123")
    )
    assert problems == [f"Answering.ApiKey: a secret is not accepted in the file; {REFERENCE_HINT}"]


def test_a_model_without_an_address_and_an_address_without_a_model_are_refused() -> None:
    assert problems_of(with_answering(Model="m", ApiKey={"Env": "K"})) == [
        "Answering.Model: needs Url, the endpoint it belongs to",
        "Answering.ApiKey: needs Url, the endpoint it belongs to",
    ]
    assert problems_of(with_answering(Url="https://llm.example.org/v1")) == [
        "Answering.Model: is required with Url"
    ]
    assert problems_of(with_answering(Url="https://llm.example.org/v1", Model="a\nb")) == [
        "Answering.Model: must be 1 to 256 characters without control characters"
    ]


@pytest.mark.parametrize(
    ("key", "value", "rule"),
    [
        ("MaxMailCharacters", 999, "must be from 1000 to 1000000"),
        ("MaxCitations", 0, "must be from 1 to 200"),
        ("MaxAnswerCharacters", 99, "must be from 100 to 1000000"),
        ("MaxProviderCalls", 1, "must be from 2 to 100"),
        ("MaxLookups", 0, "must be from 1 to 200"),
        ("MaxQuestionTokens", 10, "must be from 1000 to 100000000"),
        ("MaxRunsPerPeriod", 0, "must be from 1 to 1000000"),
        ("MaxTokensPerPeriod", 999, "must be from 1000 to 10000000000"),
        ("PeriodHours", 0, "must be from 0.1 to 8784 hours"),
        ("TimeoutSeconds", 0.5, "must be from 1 to 600 seconds"),
        ("RecheckSeconds", 0, "must be from 1 to 86400 seconds"),
        ("MaxCitations", "5", "must be an integer"),
    ],
)
def test_every_bound_is_held_to_its_range(key: str, value: object, rule: str) -> None:
    assert problems_of(with_answering(**{key: value})) == [f"Answering.{key}: {rule}"]


def test_an_unknown_key_is_refused() -> None:
    (problem,) = problems_of(with_answering(Endpoint="https://llm.example.org/v1"))
    assert problem.startswith("Answering.Endpoint:")


def test_the_example_configuration_answers_with_a_model_on_this_machine() -> None:
    config = load_config(DOCS / "mailfathom.example.toml").answering
    assert config.endpoint == ChatEndpoint("http://127.0.0.1:11434/v1", "qwen2.5:7b")
    assert config.question.mail_characters == 20_000
