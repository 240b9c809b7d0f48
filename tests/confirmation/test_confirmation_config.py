"""The confirmation settings: each caller entry's `Confirmation`, the time a person has to
answer (`McpEndpoint.ConfirmationTimeoutSeconds`), and how many questions one caller may keep
waiting (`McpEndpoint.QuestionsWaitingPerCaller`)."""

from __future__ import annotations

import pytest

from config.test_config_loading import parse, problems_of
from config.test_mcp_endpoint_config import keyed, with_endpoint
from mailfathom.domain.access import ConfirmationMode
from mailfathom.domain.config import (
    DEFAULT_CONFIRMATION_TIMEOUT_SECONDS,
    DEFAULT_QUESTIONS_WAITING_PER_CALLER,
)
from mailfathom.entrypoints.mcp.http_app import caller_of


def test_an_entry_asks_nobody_unless_it_says_ask() -> None:
    config = parse(
        with_endpoint(
            Enabled=True,
            Callers=[keyed("plain"), keyed("careful", Confirmation="ask")],
            ConfirmationTimeoutSeconds=45,
        )
    )
    plain, careful = config.mcp.callers
    assert plain.confirmation is ConfirmationMode.NONE
    assert careful.confirmation is ConfirmationMode.ASK
    assert caller_of(careful).confirmation is ConfirmationMode.ASK
    assert caller_of(plain).confirmation is ConfirmationMode.NONE
    assert config.mcp.confirmation_timeout_seconds == 45


def test_the_question_timeout_has_a_default() -> None:
    config = parse(with_endpoint(Enabled=True, Callers=[keyed()]))
    assert config.mcp.confirmation_timeout_seconds == DEFAULT_CONFIRMATION_TIMEOUT_SECONDS


@pytest.mark.parametrize("value", ["always", "Ask", "", "yes"])
def test_an_unknown_confirmation_is_refused(value: str) -> None:
    found = problems_of(with_endpoint(Enabled=True, Callers=[keyed(Confirmation=value)]))
    assert any("Confirmation" in p for p in found)


@pytest.mark.parametrize("value", [0, 0.5, 3601, -1])
def test_a_timeout_outside_its_range_is_refused(value: float) -> None:
    found = problems_of(
        with_endpoint(Enabled=True, Callers=[keyed()], ConfirmationTimeoutSeconds=value)
    )
    assert any("ConfirmationTimeoutSeconds" in p for p in found)


def test_the_questions_one_caller_may_keep_waiting_are_configured_or_defaulted() -> None:
    configured = parse(with_endpoint(Enabled=True, Callers=[keyed()], QuestionsWaitingPerCaller=3))
    assert configured.mcp.questions_waiting_per_caller == 3
    defaulted = parse(with_endpoint(Enabled=True, Callers=[keyed()]))
    assert defaulted.mcp.questions_waiting_per_caller == DEFAULT_QUESTIONS_WAITING_PER_CALLER


@pytest.mark.parametrize("value", [0, -1, 1001, 2.5])
def test_a_waiting_questions_bound_outside_its_range_is_refused(value: float) -> None:
    found = problems_of(
        with_endpoint(Enabled=True, Callers=[keyed()], QuestionsWaitingPerCaller=value)
    )
    assert any("QuestionsWaitingPerCaller" in p for p in found)
