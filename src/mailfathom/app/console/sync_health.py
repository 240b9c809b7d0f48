"""The console's synchronization health: per account and mapped folder, when a pass last
committed progress and how long ago (what `mfctl accounts` shows), the code the last failed
pass stopped on, the repairs that wait, which accounts wait for the person to grant access
again, with the command that does it, and the warnings of accounts that are not held (a
rotated refresh token not written to its file).

Codes, counts, times and the configuration's own names only: a health report holds no
message, address or server text. Nothing here decides anything; the fixes are commands."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from mailfathom.app.maintenance.store_overview import StoreOverview
from mailfathom.domain.account_health import AccountHealth, AccountWarning, HealthState
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.sync_failures import SyncFailure


class SyncFailures(Protocol):
    def failures(self) -> list[SyncFailure]:
        """Every account's and folder's last failure still kept."""
        ...


class PendingRepairs(Protocol):
    def repairs_by_folder(self, account_id: str) -> dict[int, int]:
        """Repair requests waiting per folder identifier of the account."""
        ...

    def unfinished_reverifications(self) -> frozenset[str]:
        """Accounts whose reverification stopped before its end."""
        ...


@dataclass(frozen=True, slots=True)
class FolderHealth:
    alias: str
    role: str | None
    messages: int
    last_committed_at: datetime | None
    # Whole seconds since then; None when no pass has committed yet.
    age_seconds: int | None
    failure: SyncFailure | None
    repairs: int


@dataclass(frozen=True, slots=True)
class AccountLine:
    account_id: str
    display_name: str
    held: AccountHealth | None
    # What to mend though nothing holds the account back.
    warnings: tuple[AccountWarning, ...]
    failure: SyncFailure | None
    folders: tuple[FolderHealth, ...]
    reverify_unfinished: bool
    # What the owner runs to give access again; None unless the account waits for it.
    consent_command: str | None

    @property
    def repairs(self) -> int:
        return sum(f.repairs for f in self.folders)


@dataclass(frozen=True, slots=True)
class HealthReport:
    accounts: tuple[AccountLine, ...]

    @property
    def needing_consent(self) -> tuple[AccountLine, ...]:
        return tuple(a for a in self.accounts if a.consent_command is not None)


def consent_command(account_id: str) -> str:
    """The command that asks the person to grant an account access again."""
    return f"mailfathom account consent --account {account_id}"


def reverify_command(account_id: str) -> str:
    """The command that resumes an account's unfinished reverification."""
    return f"mailfathom mailbox reverify --account {account_id}"


class SyncHealth:
    def __init__(
        self,
        accounts: Sequence[AccountConfig],
        overview: StoreOverview,
        held_accounts: Callable[[], list[AccountHealth]],
        warned_accounts: Callable[[], list[AccountWarning]],
        failures: SyncFailures,
        repairs: PendingRepairs,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._accounts = tuple(accounts)
        self._overview = overview
        self._held = held_accounts
        self._warned = warned_accounts
        self._failures = failures
        self._repairs = repairs
        self._clock = clock

    def report(self) -> HealthReport:
        now = self._clock()
        held = {h.account_id: h for h in self._held()}
        warned: dict[str, list[AccountWarning]] = {}
        for warning in self._warned():
            warned.setdefault(warning.account_id, []).append(warning)
        kept = {(f.account_id, f.folder_id): f for f in self._failures.failures()}
        unfinished = self._repairs.unfinished_reverifications()
        lines = []
        for account in self._accounts:
            repairs = self._repairs.repairs_by_folder(account.account_id)
            folders = tuple(
                FolderHealth(
                    alias=line.mapping.alias,
                    role=line.mapping.role.value if line.mapping.role else None,
                    messages=line.messages,
                    last_committed_at=line.last_committed_at,
                    age_seconds=_age(now, line.last_committed_at),
                    failure=None
                    if line.folder_id is None
                    else kept.get((account.account_id, line.folder_id)),
                    repairs=0 if line.folder_id is None else repairs.get(line.folder_id, 0),
                )
                for line in self._overview.folders(account)
            )
            health = held.get(account.account_id)
            waits = health is not None and health.state is HealthState.CONSENT_REQUIRED
            lines.append(
                AccountLine(
                    account_id=account.account_id,
                    display_name=account.display_name,
                    held=health,
                    warnings=tuple(warned.get(account.account_id, ())),
                    failure=kept.get((account.account_id, None)),
                    folders=folders,
                    reverify_unfinished=account.account_id in unfinished,
                    consent_command=consent_command(account.account_id) if waits else None,
                )
            )
        return HealthReport(tuple(lines))


def _age(now: datetime, then: datetime | None) -> int | None:
    if then is None:
        return None
    aware = then if then.tzinfo is not None else then.replace(tzinfo=UTC)
    return max(0, int((now - aware).total_seconds()))
