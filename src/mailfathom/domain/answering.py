"""Answering a question about mail with a chat model, as values: the chat endpoint an operator
declares, what one question and one period may spend, and why a provider failed a run.

The bounds on one question are the contract's (20,000 characters of mail read, 20
citations, 20,000 characters of answer) unless the operator lowers or raises them; a caller
can never move any of them. What a question and a period may spend at the provider (calls
and tokens) has no contract figure, so the defaults here are this deployment's own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mailfathom.domain.codes import AnsweringCode
from mailfathom.domain.connections import SecretRef

# The contract's figure for ask_mail's question argument.
MAX_QUESTION_CHARACTERS = 1000

DEFAULT_MAX_MAIL_CHARACTERS = 20_000
DEFAULT_MAX_CITATIONS = 20
DEFAULT_MAX_ANSWER_CHARACTERS = 20_000
DEFAULT_MAX_PROVIDER_CALLS = 8
DEFAULT_MAX_LOOKUPS = 12
DEFAULT_MAX_QUESTION_TOKENS = 100_000
DEFAULT_PERIOD_HOURS = 24.0
DEFAULT_MAX_RUNS_PER_PERIOD = 200
DEFAULT_MAX_TOKENS_PER_PERIOD = 2_000_000
DEFAULT_CHAT_TIMEOUT_SECONDS = 60.0
# How long a chat endpoint that refused is left alone before a question may try it again.
DEFAULT_RECHECK_SECONDS = 60.0


class ChatFailure(enum.Enum):
    """Why the chat provider failed a run. Each reaches a caller as 54001 and the operator,
    in the log and in the chat role's health record, under its own code."""

    # The endpoint refused the request: the credential (401, 403) or the request itself
    # (another 4xx, such as a model it does not serve).
    REFUSED = "refused"
    # No usable answer within the call's budget: a timeout, no connection, a 429 or a 5xx.
    UNREACHABLE = "unreachable"
    # An answer carrying no text and no lookup, or one that is not a chat completion at all.
    NO_TEXT = "noText"

    @property
    def code(self) -> int:
        return int(
            {
                ChatFailure.REFUSED: AnsweringCode.CHAT_REFUSED,
                ChatFailure.UNREACHABLE: AnsweringCode.CHAT_UNREACHABLE,
                ChatFailure.NO_TEXT: AnsweringCode.CHAT_NO_TEXT,
            }[self]
        )

    @property
    def withholds_answering(self) -> bool:
        """Whether this failure says the endpoint cannot serve questions now, so ask_mail is
        withheld until the recheck. An answer without text says nothing of the sort."""
        return self is not ChatFailure.NO_TEXT


@dataclass(frozen=True, slots=True)
class ChatEndpoint:
    """An OpenAI-compatible chat-completions endpoint (`base_url` ends before
    `/chat/completions`, as `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`)."""

    base_url: str
    model: str
    api_key: SecretRef | None = None
    timeout_seconds: float = DEFAULT_CHAT_TIMEOUT_SECONDS


@dataclass(frozen=True, slots=True)
class QuestionLimits:
    """What one question may read, cite, answer with and spend."""

    mail_characters: int = DEFAULT_MAX_MAIL_CHARACTERS
    citations: int = DEFAULT_MAX_CITATIONS
    answer_characters: int = DEFAULT_MAX_ANSWER_CHARACTERS
    provider_calls: int = DEFAULT_MAX_PROVIDER_CALLS
    lookups: int = DEFAULT_MAX_LOOKUPS
    tokens: int = DEFAULT_MAX_QUESTION_TOKENS


@dataclass(frozen=True, slots=True)
class PeriodLimits:
    """What one caller may spend in one period: periods are fixed windows of `hours`
    counted from the Unix epoch, in UTC, so every process agrees where one ends."""

    hours: float = DEFAULT_PERIOD_HOURS
    runs: int = DEFAULT_MAX_RUNS_PER_PERIOD
    tokens: int = DEFAULT_MAX_TOKENS_PER_PERIOD

    @property
    def seconds(self) -> int:
        return max(1, round(self.hours * 3600))


@dataclass(frozen=True, slots=True)
class AnsweringConfig:
    """The `[Answering]` section. Without an endpoint this deployment answers no questions."""

    endpoint: ChatEndpoint | None = None
    question: QuestionLimits = field(default_factory=QuestionLimits)
    period: PeriodLimits = field(default_factory=PeriodLimits)
    recheck_seconds: float = DEFAULT_RECHECK_SECONDS
