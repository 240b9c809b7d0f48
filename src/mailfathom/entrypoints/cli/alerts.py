"""`mfctl alerts`: drafts waiting for their owner because nobody could be asked whether to send
them (list, dismiss).

An alert shows the account, the draft's identifier and when it was raised; never anything of
the message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.table import Table

from mailfathom.app.confirmation.administer_alerts import OwnerAlertAdministration
from mailfathom.entrypoints.cli.deployment import ConfigOption, with_services
from mailfathom.entrypoints.cli.terminal import answers, errors

T = TypeVar("T")
alerts_app = typer.Typer(
    help="Drafts waiting for their owner: list and dismiss the alerts.", no_args_is_help=True
)
console = answers
err_console = errors


def _with_alerts(config: Path | None, work: Callable[[OwnerAlertAdministration], T]) -> T:
    return with_services(config, lambda services: work(services.alerts()))


@alerts_app.command("list")
def list_alerts(
    config: ConfigOption = None,
    include_dismissed: Annotated[bool, typer.Option("--all", help="Dismissed alerts too.")] = False,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
) -> None:
    """The newest alerts: the alert key, the account, the draft and when."""
    alerts = _with_alerts(config, lambda a: a.listing(include_dismissed, limit))
    table = Table("alert", "account", "draft", "raised at", "reason", "dismissed at")
    for alert in alerts:
        table.add_row(
            alert.key,
            alert.account_id,
            alert.draft_id,
            alert.raised_at.isoformat(timespec="seconds"),
            alert.reason,
            alert.dismissed_at.isoformat(timespec="seconds") if alert.dismissed_at else "",
        )
    console.print(table, soft_wrap=True)


@alerts_app.command("dismiss")
def dismiss(alert_key: str, config: ConfigOption = None) -> None:
    """Dismiss one alert, named by its key as `list` shows it."""
    if not _with_alerts(config, lambda a: a.dismiss(alert_key.strip())):
        err_console.print("No undismissed alert is held under that key.")
        raise typer.Exit(code=1)
    console.print("dismissed")
