"""The console's overview: how many decisions and problems wait, counted over the store.

Counts only: an overview names no message, address or draft."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.console.ports import OverviewCounts, OverviewReader
from mailfathom.domain.account_health import AccountHealth, HealthState


@dataclass(frozen=True, slots=True)
class Overview:
    counts: OverviewCounts
    accounts_needing_consent: int
    accounts_refused_login: int


class ConsoleOverview:
    def __init__(
        self,
        reader: OverviewReader,
        held_accounts: Callable[[], list[AccountHealth]],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._reader = reader
        self._held = held_accounts
        self._clock = clock

    def overview(self) -> Overview:
        held = self._held()
        return Overview(
            counts=self._reader.counts(self._clock()),
            accounts_needing_consent=sum(h.state is HealthState.CONSENT_REQUIRED for h in held),
            accounts_refused_login=sum(h.state is HealthState.CREDENTIALS_REFUSED for h in held),
        )
