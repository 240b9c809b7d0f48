"""ask_mail's use case over the in-memory ports: whether it can answer now (56001), what a
caller's period may spend (57001), and the chat provider's failures (54001 to the caller,
their own codes to the operator)."""

from __future__ import annotations

import pytest

from answering.deployment import RECHECK_SECONDS, answering
from fakes.answering import ScriptedChat, fails, lookup, say
from mailfathom.app.answering.availability import (
    EMBEDDINGS_DEGRADED,
    ENDPOINT_REFUSING,
    NO_EMBEDDINGS,
    NO_ENDPOINT,
)
from mailfathom.domain.answering import ChatFailure, PeriodLimits
from mailfathom.domain.codes import AnsweringCode, Code
from mailfathom.domain.embedding import SemanticState
from mailfathom.domain.errors import Category, ChatProviderFailed, Refusal

QUESTION = "Who wrote about the invoice?"


def _refusal(run_ask: object) -> Refusal:
    assert callable(run_ask)
    with pytest.raises(Refusal) as refused:
        run_ask()
    return refused.value


def test_a_deployment_declaring_no_endpoint_answers_no_questions() -> None:
    run = answering(ScriptedChat(), declared=False)
    assert run.reader.available() is False
    refused = _refusal(lambda: run.ask(QUESTION))
    assert (refused.code, refused.message) == (Code.ANSWERING_UNAVAILABLE, NO_ENDPOINT)


@pytest.mark.parametrize(
    ("state", "message"),
    [(SemanticState.INACTIVE, NO_EMBEDDINGS), (SemanticState.DEGRADED, EMBEDDINGS_DEGRADED)],
)
def test_without_embeddings_a_deployment_answers_no_questions(
    state: SemanticState, message: str
) -> None:
    run = answering(ScriptedChat(say("never")))
    run.semantic.current = state
    assert run.reader.available() is False
    refused = _refusal(lambda: run.ask(QUESTION))
    assert (refused.code, refused.message) == (Code.ANSWERING_UNAVAILABLE, message)
    assert run.chat.asked == []
    run.semantic.current = SemanticState.AVAILABLE
    assert run.reader.available() is True
    assert run.ask(QUESTION).answer == "never"


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (ChatFailure.REFUSED, AnsweringCode.CHAT_REFUSED),
        (ChatFailure.UNREACHABLE, AnsweringCode.CHAT_UNREACHABLE),
    ],
)
def test_a_refusing_endpoint_is_left_alone_for_the_recheck_window_then_tried_again(
    failure: ChatFailure, code: AnsweringCode
) -> None:
    run = answering(ScriptedChat(fails(failure), say("Back.")))
    with pytest.raises(ChatProviderFailed) as failed:
        run.ask(QUESTION)
    assert failed.value.code == code
    assert failed.value.category is Category.CONFIGURATION
    assert run.health.record == (failure, run.clocks.now)
    assert run.reader.available() is False
    refused = _refusal(lambda: run.ask(QUESTION))
    assert (refused.code, refused.message) == (Code.ANSWERING_UNAVAILABLE, ENDPOINT_REFUSING)
    run.clocks.advance(RECHECK_SECONDS - 1)
    assert run.reader.available() is False
    run.clocks.advance(1)
    assert run.reader.available() is True
    assert run.ask(QUESTION).answer == "Back."
    assert run.health.record is None
    assert len(run.chat.asked) == 2


@pytest.mark.parametrize("turn", [fails(ChatFailure.NO_TEXT), say("   ")])
def test_an_answer_without_text_fails_the_question_but_withholds_nothing(turn: object) -> None:
    run = answering(ScriptedChat(turn, say("Second time lucky.")))  # type: ignore[arg-type]
    with pytest.raises(ChatProviderFailed) as failed:
        run.ask(QUESTION)
    assert failed.value.code == AnsweringCode.CHAT_NO_TEXT
    assert run.health.record is not None
    assert run.health.record[0] is ChatFailure.NO_TEXT
    assert run.reader.available() is True
    assert run.ask(QUESTION).answer == "Second time lucky."


def test_a_failure_in_the_middle_of_a_run_fails_the_question() -> None:
    run = answering(ScriptedChat(lookup(queryText="invoice"), fails(ChatFailure.UNREACHABLE)))
    with pytest.raises(ChatProviderFailed):
        run.ask(QUESTION)
    assert run.reader.available() is False


def test_a_callers_period_counts_runs_and_gives_them_back_when_it_ends() -> None:
    run = answering(
        ScriptedChat(then=say("Answer.")), period=PeriodLimits(hours=1, runs=2, tokens=10**9)
    )
    run.ask(QUESTION)
    run.ask(QUESTION)
    refused = _refusal(lambda: run.ask(QUESTION))
    assert refused.code == Code.ANSWERING_BUDGET_SPENT
    assert "current period is spent" in refused.message
    assert len(run.chat.asked) == 2
    run.clocks.advance(3600)
    assert run.ask(QUESTION).answer == "Answer."


def test_a_callers_period_counts_tokens_and_stops_a_run_that_spends_them() -> None:
    run = answering(
        ScriptedChat(lookup(queryText="invoice", tokens=3000), then=say("Answer.", tokens=10)),
        period=PeriodLimits(hours=24, runs=100, tokens=2000),
    )
    refused = _refusal(lambda: run.ask(QUESTION))
    assert refused.code == Code.ANSWERING_BUDGET_SPENT
    assert "current period is spent" in refused.message
    assert len(run.chat.asked) == 1
    again = _refusal(lambda: run.ask(QUESTION))
    assert again.code == Code.ANSWERING_BUDGET_SPENT
    assert len(run.chat.asked) == 1


def test_each_caller_has_a_period_of_its_own() -> None:
    from mailfathom.domain.access import Caller, Permission

    run = answering(ScriptedChat(then=say("Answer.")), period=PeriodLimits(runs=1))
    run.ask(QUESTION)
    other = Caller(frozenset({Permission.ASK, Permission.MAIL_READ}), "other")
    assert run.ask(QUESTION, caller=other).answer == "Answer."
    assert _refusal(lambda: run.ask(QUESTION)).code == Code.ANSWERING_BUDGET_SPENT


def test_a_question_refused_before_the_run_spends_no_run_of_the_period() -> None:
    run = answering(ScriptedChat(then=say("Answer.")), period=PeriodLimits(runs=1))
    with pytest.raises(Refusal):
        run.ask(QUESTION, accounts=["elsewhere"])
    assert run.ask(QUESTION).answer == "Answer."
