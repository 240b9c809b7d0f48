"""What a process counts of its synchronization and embedding work, for an operator's metrics.

Counts, seconds and codes only, under the configured account id (an operator's name, never
an address: `text_rules.ACCOUNT_IDENTIFIER`): nothing read from mail reaches a meter. The
entrypoint that publishes metrics gives one; without, nothing is counted.
"""

from __future__ import annotations

from typing import Protocol


class WorkMeter(Protocol):
    def pass_ended(self, account_id: str, stored: int, seconds: float) -> None:
        """A pass ended: over the account's folders when polling, over one folder when it is
        watched (push). `stored`: messages it stored."""
        ...

    def pass_failed(self, account_id: str, code: int) -> None:
        """A pass, or the session it needed, stopped on the failure coded `code`."""
        ...

    def passages_embedded(self, count: int) -> None:
        """The embedding worker embedded `count` passages."""
        ...


class Unmetered:
    """Counts nothing: a process that publishes no metrics."""

    def pass_ended(self, account_id: str, stored: int, seconds: float) -> None:
        return None

    def pass_failed(self, account_id: str, code: int) -> None:
        return None

    def passages_embedded(self, count: int) -> None:
        return None
