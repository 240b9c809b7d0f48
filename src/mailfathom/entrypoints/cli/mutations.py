"""`mfctl mutations`: the operator's view of recorded mailbox changes (list, show, retry).

It shows what a record holds about a change (its kind, state, attempts, the failure code and
what it means, the folder aliases a move leaves and goes to, the alias a new folder is
published under and its parent's) and never what a keyword change names: keywords are the
owner's own labels, so only how many a record names is shown, like nothing of the message
itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from mailfathom.app.flags.administer_mutations import (
    AnyRecord,
    MutationAdministration,
    Retried,
    Retry,
    change_of,
    destination_of,
)
from mailfathom.app.flags.explanations import explain
from mailfathom.domain.mutations import (
    KEYWORD_KINDS,
    FolderCreationRecord,
    MutationRecord,
    MutationState,
    keywords_of,
)
from mailfathom.entrypoints.cli.deployment import ConfigOption, identifier, with_services
from mailfathom.entrypoints.cli.terminal import answers, say_error

T = TypeVar("T")
mutations_app = typer.Typer(
    help="Recorded mailbox changes (flags, keywords, moves, folder creations): list, show "
    "and retry them.",
    no_args_is_help=True,
)

_ROW = "{:<36}  {:<16}  {:<15}  {:<13}  {:>8}  {:<4}  {}"
_GONE = "(folder no longer held)"
_TOP = "(top level)"


def _identifier(text: str) -> uuid.UUID:
    return identifier(text, "Not a change record identifier.")


def _with_records(config: Path | None, work: Callable[[MutationAdministration], T]) -> T:
    return with_services(config, lambda services: work(services.mutations()))


def _with_aliases(
    m: MutationAdministration, found: T, records: Sequence[AnyRecord | None]
) -> tuple[T, dict[int, str]]:
    """`found` with the aliases of the folders its records name."""
    return found, m.folder_aliases([r for r in records if r is not None])


def _value(record: MutationRecord, aliases: dict[int, str]) -> str:
    """A flag's asked value, how many keywords a keyword change names (never which), or the
    alias of the folder a move goes to."""
    if record.kind in KEYWORD_KINDS:
        return f"{len(keywords_of(record.value))} keyword(s)"
    destination = destination_of(record)
    if destination is not None:
        return f"to {aliases.get(destination, _GONE)}"
    return record.value


def _folders(record: AnyRecord, aliases: dict[int, str]) -> str:
    """The folder the message was in when the change was asked for, and a move's
    destination; the alias a new folder is published under."""
    if isinstance(record, FolderCreationRecord):
        return record.alias
    where = aliases.get(record.folder_id, _GONE)
    destination = destination_of(record)
    if destination is None:
        return where
    return f"{where} -> {aliases.get(destination, _GONE)}"


def _show(record: AnyRecord, aliases: dict[int, str]) -> None:
    if isinstance(record, FolderCreationRecord):
        _show_creation(record, aliases)
        return
    lines = [
        f"change record   {record.record_id}",
        f"account         {record.account_id}",
        f"email           {record.stored_email_id}",
        f"folder          {aliases.get(record.folder_id, _GONE)}",
        f"asked by        {record.requester}",
        f"change          {record.kind.value}",
        f"value           {_value(record, aliases)}",
        f"state           {record.state.value}",
        f"attempts        {record.attempts}",
        f"recorded at     {record.created_at.isoformat(timespec='seconds')}",
        f"updated at      {record.updated_at.isoformat(timespec='seconds')}",
    ]
    _print(lines, record.last_error_code, creation=False)


def _show_creation(record: FolderCreationRecord, aliases: dict[int, str]) -> None:
    parent = record.parent_folder_id
    lines = [
        f"change record   {record.record_id}",
        f"account         {record.account_id}",
        f"folder          {record.alias}",
        f"parent folder   {_TOP if parent is None else aliases.get(parent, _GONE)}",
        f"asked by        {record.requester}",
        f"change          {change_of(record)}",
        f"state           {record.state.value}",
        f"attempts        {record.attempts}",
        f"recorded at     {record.created_at.isoformat(timespec='seconds')}",
        f"updated at      {record.updated_at.isoformat(timespec='seconds')}",
    ]
    _print(lines, record.last_error_code, creation=True)


def _print(lines: list[str], code: int | None, *, creation: bool) -> None:
    if code is not None:
        lines.append(f"failure code    {code}: {explain(code, creation=creation)}")
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

    def listed(m: MutationAdministration) -> tuple[list[AnyRecord], dict[int, str]]:
        found = m.changes(limit, wanted or None, account)
        return _with_aliases(m, found, found)

    records, aliases = _with_records(config, listed)
    if not records:
        answers.print("No change records in the state(s) asked for.")
        return
    # One line per record, never shortened to a terminal's width: the identifier is what
    # `show` and `retry` take.
    lines = [
        _ROW.format("change record", "account", "change", "state", "attempts", "code", "folder")
    ]
    for r in records:
        code = "" if r.last_error_code is None else str(r.last_error_code)
        lines.append(
            _ROW.format(
                str(r.record_id),
                r.account_id,
                change_of(r),
                r.state.value,
                r.attempts,
                code,
                _folders(r, aliases),
            )
        )
    for line in lines:
        answers.print(line.rstrip(), markup=False, highlight=False, soft_wrap=True)


@mutations_app.command("show")
def show(change_record_id: str, config: ConfigOption = None) -> None:
    """One record: its change, state, attempts and what its failure code means."""
    identifier = _identifier(change_record_id)

    def found(m: MutationAdministration) -> tuple[AnyRecord | None, dict[int, str]]:
        record = m.find(identifier)
        return _with_aliases(m, record, [record])

    record, aliases = _with_records(config, found)
    if record is None:
        say_error("No change record is held under that identifier.")
        raise typer.Exit(code=1)
    _show(record, aliases)


@mutations_app.command("retry")
def retry(change_record_id: str, config: ConfigOption = None) -> None:
    """Send a dead-lettered record back to the synchronization run: pending again, attempts
    reset, its value shown on the local copy again. Any other record is left as it is (exit
    status 1), and so is a folder creation whose alias a served folder or another creation
    carries now."""
    identifier = _identifier(change_record_id)

    def retried(m: MutationAdministration) -> tuple[Retry | None, dict[int, str]]:
        outcome = m.retry(identifier)
        return _with_aliases(m, outcome, [outcome.record if outcome else None])

    outcome, aliases = _with_records(config, retried)
    if outcome is None:
        say_error("No change record is held under that identifier.")
        raise typer.Exit(code=1)
    if outcome.outcome is Retried.NOW:
        answers.print("The change is pending again; the account's next pass issues it.")
    elif outcome.outcome is Retried.ALIAS_CLAIMED:
        say_error(
            "A folder the account serves, or another folder creation, already carries its "
            "alias; the record stays dead-lettered and nothing changed."
        )
    else:
        say_error(
            f"The record is {outcome.record.state.value}, not dead-lettered; nothing changed."
        )
    _show(outcome.record, aliases)
    if outcome.outcome is not Retried.NOW:
        raise typer.Exit(code=1)
