"""What a continuous run makes of a pass that ended: whether it changed anything (so another
follows before waiting), and how a failure without a code of its own is logged."""

from __future__ import annotations

import structlog

from mailfathom.app.sync.types import SyncReport
from mailfathom.domain.errors import SecretUnavailable

log = structlog.get_logger("mailfathom.sync")


def changed_anything(report: SyncReport) -> bool:
    return bool(
        report.stored
        or report.fetched_bodies
        or report.flags_updated
        or report.removed
        or report.rekeyed
        or report.uidvalidity_reset
    )


def log_unexpected(error: Exception, account_id: str, backoff: float) -> None:
    """Only the failure's type is logged: library messages can quote the values involved,
    and those may be mail content. A secret that cannot be read is named by its
    configuration key, which is all an operator needs to put it back."""
    if isinstance(error, SecretUnavailable):
        log.error(
            "account.secret_not_readable",
            account=account_id,
            key=error.origin,
            error_code=error.code,
            retry_in=backoff,
        )
        return
    log.error(
        "account.pass_failed_unexpectedly",
        account=account_id,
        error=type(error).__name__,
        retry_in=backoff,
    )
