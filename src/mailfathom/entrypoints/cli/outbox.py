"""`mfctl outbox`: the operator's view of queued sends (list, show, cancel).

It shows what a record holds about a send (state, attempts, recipients and their replies,
the failure code) and never the message itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from mailfathom.app.sending.administer_outbox import OutboxAdministration
from mailfathom.bootstrap import Services
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.outgoing import OutgoingRecord, Stage
from mailfathom.entrypoints.cli.loading import load

T = TypeVar("T")
outbox_app = typer.Typer(help="Queued sends: list, show and cancel them.", no_args_is_help=True)
console = Console()
err_console = Console(stderr=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
]


def _identifier(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        err_console.print("Not an outgoing email identifier.")
        raise typer.Exit(code=2) from None


def _with_outbox(config: Path | None, work: Callable[[OutboxAdministration], T]) -> T:
    """Run `work` on the deployment's outbox; a configuration or store failure ends the
    command with its message and exit code 2."""
    try:
        with Services.open(load(config)) as services:
            return work(services.outbox())
    except MailFathomError as error:
        err_console.print(str(error))
        raise typer.Exit(code=2) from None


def _show(record: OutgoingRecord) -> None:
    console.print(f"outgoing email  {record.outgoing_id}")
    console.print(f"account         {record.account_id}")
    console.print(f"queued by       {record.caller}")
    console.print(f"kind            {record.kind.value}")
    console.print(f"state           {record.stage.published}")
    console.print(f"attempts        {record.attempt_count}")
    console.print(f"queued at       {record.queued_at.isoformat()}")
    if record.failure_code is not None:
        console.print(f"failure code    {record.failure_code}")
    for r in record.recipients:
        code = "" if r.last_reply_code is None else f" ({r.last_reply_code})"
        console.print(f"  {r.field.value:<3} {r.address}  {r.state.value}{code}")


@outbox_app.command("list")
def list_outbox(
    config: ConfigOption = None,
    stage: Annotated[
        list[str] | None,
        typer.Option(
            "--state",
            help="Only sends in this state (repeatable): queued, "
            "sending, sent, refused, cancelled.",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
) -> None:
    """The newest sends, with their state and attempts."""
    published = {s.published: s for s in Stage}
    wanted = []
    for name in stage or []:
        if name not in published:
            err_console.print(f"Unknown state; accepted: {', '.join(published)}")
            raise typer.Exit(code=2)
        wanted.append(published[name])
    entries = _with_outbox(config, lambda outbox: outbox.listing(limit, wanted or None))
    table = Table("outgoing email", "account", "state", "attempts", "queued at", "recipients")
    for entry in entries:
        r = entry.record
        table.add_row(
            str(r.outgoing_id),
            r.account_id,
            r.stage.published,
            str(r.attempt_count),
            r.queued_at.isoformat(timespec="seconds"),
            str(len(r.recipients)),
        )
    console.print(table)


@outbox_app.command("show")
def show(
    outgoing_email_id: str,
    config: ConfigOption = None,
) -> None:
    """One send: its state, attempts, recipients and their last replies."""
    identifier = _identifier(outgoing_email_id)
    record = _with_outbox(config, lambda outbox: outbox.find(identifier))
    if record is None:
        err_console.print("No send is held under that identifier.")
        raise typer.Exit(code=1)
    _show(record)


@outbox_app.command("cancel")
def cancel(
    outgoing_email_id: str,
    config: ConfigOption = None,
) -> None:
    """Withdraw a send that is still waiting (whoever queued it)."""
    identifier = _identifier(outgoing_email_id)
    record = _with_outbox(config, lambda outbox: outbox.cancel(identifier))
    if record is None:
        err_console.print("No send is held under that identifier.")
        raise typer.Exit(code=1)
    if record.stage is not Stage.CANCELLED:
        err_console.print(
            "The send is being transmitted, was transmitted, or was given up on; nothing was "
            "withdrawn."
        )
        _show(record)
        raise typer.Exit(code=1)
    _show(record)
