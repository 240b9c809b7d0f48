"""The operator's view of owner alerts (`mfctl alerts`): drafts waiting because nobody could
be asked whether to send them. An alert names the account, the draft and when; nothing of the
message."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from mailfathom.app.confirmation.ports import OwnerAlert, OwnerAlerts


class OwnerAlertAdministration:
    def __init__(
        self, alerts: OwnerAlerts, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._alerts = alerts
        self._clock = clock

    def listing(self, include_dismissed: bool = False, limit: int = 50) -> list[OwnerAlert]:
        return self._alerts.listing(include_dismissed, limit)

    def dismiss(self, key: str) -> bool:
        return self._alerts.dismiss(key, self._clock())
