"""The console's overview: how many decisions and problems wait, counted over the store,
and each account's state.

Counts and account names only: an overview names no message, address or draft."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.app.console.ports import OverviewCounts, OverviewReader
from mailfathom.domain.account_health import AccountHealth, HealthState


@dataclass(frozen=True, slots=True)
class Overview:
    counts: OverviewCounts
    accounts_needing_consent: int
    accounts_refused_login: int
    # Each configured account's display name and what holds it back (None: nothing).
    accounts: tuple[tuple[str, HealthState | None], ...]


class ConsoleOverview:
    def __init__(
        self,
        reader: OverviewReader,
        accounts: Sequence[tuple[str, str]],
        held_accounts: Callable[[], list[AccountHealth]],
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._reader = reader
        self._accounts = tuple(accounts)
        self._held = held_accounts
        self._clock = clock

    def overview(self) -> Overview:
        held = self._held()
        states = {h.account_id: h.state for h in held}
        return Overview(
            counts=self._reader.counts(self._clock()),
            accounts_needing_consent=sum(h.state is HealthState.CONSENT_REQUIRED for h in held),
            accounts_refused_login=sum(h.state is HealthState.CREDENTIALS_REFUSED for h in held),
            accounts=tuple((name, states.get(account_id)) for account_id, name in self._accounts),
        )
