"""Owner alerts in memory: `OwnerAlerts`, one alert per key."""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime

from fakes.outbox import utc
from mailfathom.app.confirmation.ports import OwnerAlert, OwnerAlerts


class InMemoryOwnerAlerts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._alerts: dict[str, OwnerAlert] = {}

    def raise_alert(self, alert: OwnerAlert) -> bool:
        with self._lock:
            if alert.key in self._alerts:
                return False
            self._alerts[alert.key] = dataclasses.replace(alert, raised_at=utc(alert.raised_at))
            return True

    def held_reason(self, key: str) -> str | None:
        with self._lock:
            held = self._alerts.get(key)
            return None if held is None else held.reason

    def listing(self, include_dismissed: bool, limit: int) -> list[OwnerAlert]:
        with self._lock:
            kept = [a for a in self._alerts.values() if include_dismissed or not a.dismissed_at]
        kept.sort(key=lambda a: a.key)
        kept.sort(key=lambda a: a.raised_at, reverse=True)
        return kept[:limit]

    def waiting(self) -> list[OwnerAlert]:
        """Undismissed alerts: the drafts of this store dismiss an alert with its draft."""
        return self.listing(False, len(self._alerts))

    def find_waiting(self, key: str) -> OwnerAlert | None:
        with self._lock:
            alert = self._alerts.get(key)
        return alert if alert is not None and alert.dismissed_at is None else None

    def dismiss(self, key: str, now: datetime) -> bool:
        with self._lock:
            alert = self._alerts.get(key)
            if alert is None or alert.dismissed_at is not None:
                return False
            self._alerts[key] = dataclasses.replace(alert, dismissed_at=utc(now))
            return True


_: OwnerAlerts = InMemoryOwnerAlerts()
