"""`mfctl answering`: what the operator reads about answering without asking a question.

Whether a chat endpoint is declared and which model, the chat role's health record (the
failure that ended the latest question, its code and since when), and what each caller spent
in the current period. Nothing here reaches the endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from mailfathom.app.answering.ask_mail import period_start
from mailfathom.app.answering.ports import AnsweringLedger, ChatHealthRecord
from mailfathom.domain.answering import AnsweringConfig, ChatFailure


@dataclass(frozen=True, slots=True)
class CallerSpend:
    caller: str
    runs: int
    tokens: int


@dataclass(frozen=True, slots=True)
class AnsweringOverview:
    model: str | None
    health: tuple[ChatFailure, int, datetime] | None
    period_start: datetime
    period_hours: float
    spent: tuple[CallerSpend, ...]


class AnsweringAdministration:
    def __init__(
        self,
        config: AnsweringConfig,
        ledger: AnsweringLedger,
        health: ChatHealthRecord,
        *,
        clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._ledger = ledger
        self._health = health
        self._clock = clock

    def overview(self) -> AnsweringOverview:
        endpoint = self._config.endpoint
        period = self._config.period
        start = period_start(self._clock(), period)
        return AnsweringOverview(
            model=None if endpoint is None else endpoint.model,
            health=self._health.state(),
            period_start=start,
            period_hours=period.hours,
            spent=tuple(CallerSpend(*row) for row in self._ledger.spent(start)),
        )
