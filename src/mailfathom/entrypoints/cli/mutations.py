"""`mfctl mutations`: the operator's view of recorded mailbox changes (list, show, retry).

It shows what a record holds about a change (its kind, state, attempts, the failure code and
what it means) and never what the change names: keywords are the owner's own labels, so only
how many a record names is shown, like nothing of the message itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from mailfathom.app.flags.administer_mutations import MutationAdministration, Retried
from mailfathom.bootstrap import Services
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.mutations import (
    KEYWORD_KINDS,
    MutationFailure,
    MutationRecord,
    MutationState,
    keywords_of,
)
from mailfathom.entrypoints.cli.loading import load
from mailfathom.entrypoints.cli.terminal import answers, say_error

T = TypeVar("T")
mutations_app = typer.Typer(
    help="Recorded mailbox changes (flags, keywords): list, show and retry them.",
    no_args_is_help=True,
)

# What each failure code on a record means, in words an operator reads without the
# documentation. Fixed sentences: nothing of the message, the change or a server's reply.
FAILURE_EXPLANATIONS: dict[MutationFailure, str] = {
    MutationFailure.MESSAGE_GONE: (
        "The message was no longer in its folder on the mail server (deleted, moved, or the "
        "folder was renumbered), so there was nothing to change."
    ),
    MutationFailure.KEYWORD_NOT_PERMANENT: (
        "The folder does not keep that keyword permanently (a local Maildir keeps none), so "
        "the change could not be stored."
    ),
    MutationFailure.CHANGED_ON_SERVER: (
        "The message was changed on the mail server after the change was asked for and before "
        "it was issued; the server's change was kept and the local copy reads it back."
    ),
    MutationFailure.ATTEMPTS_SPENT: (
        "Every attempt to issue the change failed (no connection, or the server refused the "
        "command), so it was given up."
    ),
    MutationFailure.FOLDER_GONE: (
        "The folder the message was in is no longer on the mail server or no longer mapped."
    ),
}

_ROW = "{:<36}  {:<16}  {:<15}  {:<13}  {:>8}  {}"

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
]


def explain(code: int) -> str:
    try:
        return FAILURE_EXPLANATIONS[MutationFailure(code)]
    except ValueError:
        return "A failure this version does not describe."


def _identifier(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        say_error("Not a change record identifier.")
        raise typer.Exit(code=2) from None


def _with_records(config: Path | None, work: Callable[[MutationAdministration], T]) -> T:
    """Run `work` on the deployment's records; a configuration or store failure ends the
    command with its message and exit code 2."""
    try:
        with Services.open(load(config)) as services:
            return work(services.mutations())
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None


def _value(record: MutationRecord) -> str:
    """A flag's asked value, or how many keywords a keyword change names (never which)."""
    if record.kind in KEYWORD_KINDS:
        return f"{len(keywords_of(record.value))} keyword(s)"
    return record.value


def _show(record: MutationRecord) -> None:
    lines = [
        f"change record   {record.record_id}",
        f"account         {record.account_id}",
        f"email           {record.stored_email_id}",
        f"asked by        {record.requester}",
        f"change          {record.kind.value}",
        f"value           {_value(record)}",
        f"state           {record.state.value}",
        f"attempts        {record.attempts}",
        f"recorded at     {record.created_at.isoformat(timespec='seconds')}",
        f"updated at      {record.updated_at.isoformat(timespec='seconds')}",
    ]
    if record.last_error_code is not None:
        code = record.last_error_code
        lines.append(f"failure code    {code}: {explain(code)}")
    for line in lines:
        answers.print(line, markup=False, highlight=False, soft_wrap=True)


@mutations_app.command("list")
def list_mutations(
    config: ConfigOption = None,
    state: Annotated[
        list[str] | None,
        typer.Option(
            "--state",
            help="Only records in this state (repeatable): pending, converging, "
            "dead-lettered, completed. Default: all but completed.",
        ),
    ] = None,
    account: Annotated[str | None, typer.Option(help="Only this account's records.")] = None,
    limit: Annotated[int, typer.Option(help="How many, newest first.")] = 50,
) -> None:
    """The newest records: account, change, state, attempts, failure code, identifier."""
    published = {s.value: s for s in MutationState}
    wanted = []
    for name in state or []:
        if name not in published:
            say_error(f"Unknown state; accepted: {', '.join(published)}")
            raise typer.Exit(code=2)
        wanted.append(published[name])
    records = _with_records(config, lambda m: m.listing(limit, wanted or None, account))
    if not records:
        answers.print("No change records in the state(s) asked for.")
        return
    # One line per record, never shortened to a terminal's width: the identifier is what
    # `show` and `retry` take.
    lines = [_ROW.format("change record", "account", "change", "state", "attempts", "code")]
    for r in records:
        code = "" if r.last_error_code is None else str(r.last_error_code)
        lines.append(
            _ROW.format(
                str(r.record_id), r.account_id, r.kind.value, r.state.value, r.attempts, code
            )
        )
    for line in lines:
        answers.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True)


@mutations_app.command("show")
def show(change_record_id: str, config: ConfigOption = None) -> None:
    """One record: its change, state, attempts and what its failure code means."""
    identifier = _identifier(change_record_id)
    record = _with_records(config, lambda m: m.find(identifier))
    if record is None:
        say_error("No change record is held under that identifier.")
        raise typer.Exit(code=1)
    _show(record)


@mutations_app.command("retry")
def retry(change_record_id: str, config: ConfigOption = None) -> None:
    """Send a dead-lettered record back to the synchronization run: pending again, attempts
    reset, its value shown on the local copy again. Any other record is left as it is (exit
    status 1)."""
    identifier = _identifier(change_record_id)
    outcome = _with_records(config, lambda m: m.retry(identifier))
    if outcome is None:
        say_error("No change record is held under that identifier.")
        raise typer.Exit(code=1)
    if outcome.outcome is Retried.NOW:
        answers.print("The change is pending again; the account's next pass issues it.")
    else:
        say_error(
            f"The record is {outcome.record.state.value}, not dead-lettered; nothing changed."
        )
    _show(outcome.record)
    if outcome.outcome is not Retried.NOW:
        raise typer.Exit(code=1)
