"""The `[Answering]` section: the chat endpoint questions about mail are answered with, and
what one question and one caller's period may read and spend.

Without `Url` the deployment answers no questions and ask_mail is never offered. The address
is https, or http on a loopback host (a model served on the same machine), so mail never
crosses a network in the clear; the key is a secret reference, never written in the file.
"""

from __future__ import annotations

from pathlib import Path

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import bounded_integer, bounded_number, parse_secret
from mailfathom.domain import text_rules
from mailfathom.domain.answering import (
    DEFAULT_CHAT_TIMEOUT_SECONDS,
    AnsweringConfig,
    ChatEndpoint,
    PeriodLimits,
    QuestionLimits,
)
from mailfathom.domain.web_addresses import is_secure_address

_KEYS = frozenset(
    {
        "Url",
        "Model",
        "ApiKey",
        "TimeoutSeconds",
        "RecheckSeconds",
        "MaxMailCharacters",
        "MaxCitations",
        "MaxAnswerCharacters",
        "MaxProviderCalls",
        "MaxLookups",
        "MaxQuestionTokens",
        "PeriodHours",
        "MaxRunsPerPeriod",
        "MaxTokensPerPeriod",
    }
)
_URL_RULE = (
    "must be an absolute https:// address with a host and no user, query or fragment "
    "(http:// only on a loopback host)"
)
_MODEL_LIMIT = 256


def parse_answering(table: Table | None, base_dir: Path) -> AnsweringConfig:
    defaults = AnsweringConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_KEYS)
    return AnsweringConfig(
        endpoint=_endpoint(table, base_dir),
        question=_question(table),
        period=_period(table),
        recheck_seconds=bounded_number(
            table, "RecheckSeconds", defaults.recheck_seconds, 1, 86400, unit=" seconds"
        ),
    )


def _endpoint(table: Table, base_dir: Path) -> ChatEndpoint | None:
    url = table.string("Url")
    model = table.string("Model")
    api_key = parse_secret(table, "ApiKey", base_dir) if table.has("ApiKey") else None
    timeout = bounded_number(
        table, "TimeoutSeconds", DEFAULT_CHAT_TIMEOUT_SECONDS, 1, 600, unit=" seconds"
    )
    if url is None:
        for key in ("Model", "ApiKey"):
            if table.has(key):
                table.problems.add(table.at(key), "needs Url, the endpoint it belongs to")
        return None
    if not is_secure_address(url):
        table.problems.add(table.at("Url"), _URL_RULE)
        return None
    if model is None:
        table.problems.add(table.at("Model"), "is required with Url")
        return None
    if not model.strip() or len(model) > _MODEL_LIMIT or not text_rules.is_name(model):
        table.problems.add(
            table.at("Model"),
            f"must be 1 to {_MODEL_LIMIT} characters without control characters",
        )
        return None
    return ChatEndpoint(url.rstrip("/"), model, api_key, timeout)


def _question(table: Table) -> QuestionLimits:
    d = QuestionLimits()
    return QuestionLimits(
        mail_characters=bounded_integer(
            table, "MaxMailCharacters", d.mail_characters, 1000, 1_000_000
        ),
        citations=bounded_integer(table, "MaxCitations", d.citations, 1, 200),
        answer_characters=bounded_integer(
            table, "MaxAnswerCharacters", d.answer_characters, 100, 1_000_000
        ),
        provider_calls=bounded_integer(table, "MaxProviderCalls", d.provider_calls, 2, 100),
        lookups=bounded_integer(table, "MaxLookups", d.lookups, 1, 200),
        tokens=bounded_integer(table, "MaxQuestionTokens", d.tokens, 1000, 100_000_000),
    )


def _period(table: Table) -> PeriodLimits:
    d = PeriodLimits()
    return PeriodLimits(
        hours=bounded_number(table, "PeriodHours", d.hours, 0.1, 8784, unit=" hours"),
        runs=bounded_integer(table, "MaxRunsPerPeriod", d.runs, 1, 1_000_000),
        tokens=bounded_integer(table, "MaxTokensPerPeriod", d.tokens, 1000, 10_000_000_000),
    )
