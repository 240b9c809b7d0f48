"""`mfctl outbox`: the operator's view of queued sends (list, show, cancel).

It shows what a record holds about a send (state, attempts, recipients and their replies,
the failure code and what it means) and never the message itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.table import Column, Table

from mailfathom.app.sending.administer_outbox import OutboxAdministration, Withdrawn
from mailfathom.app.sending.explanations import explain
from mailfathom.domain.outgoing import OutgoingRecord, Stage
from mailfathom.entrypoints.cli.deployment import ConfigOption, identifier, with_services
from mailfathom.entrypoints.cli.terminal import answers, say_error

T = TypeVar("T")
outbox_app = typer.Typer(help="Queued sends: list, show and cancel them.", no_args_is_help=True)


def _identifier(text: str) -> uuid.UUID:
    return identifier(text, "Not an outgoing email identifier.")


def _with_outbox(config: Path | None, work: Callable[[OutboxAdministration], T]) -> T:
    return with_services(config, lambda services: work(services.outbox()))


def _show(record: OutgoingRecord) -> None:
    lines = [
        f"outgoing email  {record.outgoing_id}",
        f"account         {record.account_id}",
        f"queued by       {record.caller}",
        f"kind            {record.kind.value}",
        f"state           {record.stage.published}",
        f"attempts        {record.attempt_count}",
        f"queued at       {record.queued_at.isoformat()}",
    ]
    if record.send_after is not None:
        lines.append(f"send after      {record.send_after.isoformat()}")
    if record.failure_code is not None:
        lines.append(f"failure code    {record.failure_code}: {explain(record.failure_code)}")
    for r in record.recipients:
        code = "" if r.last_reply_code is None else f" ({r.last_reply_code})"
        lines.append(f"  {r.field.value:<3} {r.address}  {r.state.value}{code}")
    for line in lines:
        answers.print(line, markup=False, highlight=False, soft_wrap=True)


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
    """The newest sends, with their state, attempts and the instant a waiting one leaves
    after."""
    published = {s.published: s for s in Stage}
    wanted = []
    for name in stage or []:
        if name not in published:
            say_error(f"Unknown state; accepted: {', '.join(published)}")
            raise typer.Exit(code=2)
        wanted.append(published[name])
    entries = _with_outbox(config, lambda outbox: outbox.listing(limit, wanted or None))
    if not entries:
        answers.print("No sends in the state(s) asked for." if wanted else "No queued sends.")
        return
    # Folded rather than cut short, so an identifier or an instant is never shown in part.
    headers = ("outgoing email", "account", "state", "attempts", "queued at", "send after")
    table = Table(*(Column(h, overflow="fold") for h in (*headers, "recipients")))
    for entry in entries:
        r = entry.record
        table.add_row(
            str(r.outgoing_id),
            r.account_id,
            r.stage.published,
            str(r.attempt_count),
            r.queued_at.isoformat(timespec="seconds"),
            "" if r.send_after is None else r.send_after.isoformat(timespec="seconds"),
            str(len(r.recipients)),
        )
    answers.print(table)


@outbox_app.command("show")
def show(
    outgoing_email_id: str,
    config: ConfigOption = None,
) -> None:
    """One send: its state, attempts, recipients and their last replies."""
    identifier = _identifier(outgoing_email_id)
    record = _with_outbox(config, lambda outbox: outbox.find(identifier))
    if record is None:
        say_error("No send is held under that identifier.")
        raise typer.Exit(code=1)
    _show(record)


@outbox_app.command("cancel")
def cancel(
    outgoing_email_id: str,
    config: ConfigOption = None,
) -> None:
    """Withdraw a send that is still waiting (whoever queued it). A send that was already
    sent or refused is left as it is (exit status 1); one already cancelled stays cancelled."""
    identifier = _identifier(outgoing_email_id)
    withdrawal = _with_outbox(config, lambda outbox: outbox.withdraw(identifier))
    if withdrawal is None:
        say_error("No send is held under that identifier.")
        raise typer.Exit(code=1)
    record, outcome = withdrawal.record, withdrawal.outcome
    if outcome is Withdrawn.ALREADY_ENDED and record.stage is Stage.CANCELLED:
        answers.print("The send was already cancelled; nothing changed.")
    elif outcome is Withdrawn.ALREADY_ENDED:
        ended = "sent (delivered)" if record.stage is Stage.SENT else record.stage.published
        say_error(f"The send was already {ended}; nothing was withdrawn.")
    elif outcome is Withdrawn.IN_TRANSMISSION:
        say_error("The send is being handed over right now; nothing was withdrawn.")
    _show(record)
    if record.stage is not Stage.CANCELLED:
        raise typer.Exit(code=1)
