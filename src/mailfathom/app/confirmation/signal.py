"""Telling this process that an owner alert was recorded, so an operator's alerting can see a
draft waiting for its owner without asking for the list (the endpoint counts it on
`/metrics`).

Within one process only: an alert recorded by another process is counted there, and every
alert is in the store for `mfctl alerts list` whichever process recorded it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from mailfathom.app.confirmation.ports import OwnerAlert

log = structlog.get_logger("mailfathom.confirmation")


class AlertSignal:
    """Tells every listener of each owner alert recorded in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Callable[[OwnerAlert], None]] = []

    def listen(self, listener: Callable[[OwnerAlert], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def notify(self, alert: OwnerAlert) -> None:
        """Tell every listener; one that fails is logged and the others are still told, so
        the call that kept the draft still answers that it did."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(alert)
            except Exception as error:
                log.error("confirmation.alert_listener_failed", error_type=type(error).__name__)
