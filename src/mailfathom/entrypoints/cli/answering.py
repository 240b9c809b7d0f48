"""`mfctl answering`: whether questions can be answered, the chat role's health record, and
what each caller spent in the current period. It reaches no endpoint and shows no mail."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from mailfathom.bootstrap import Services
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.loading import load
from mailfathom.entrypoints.cli.terminal import answers, say_error

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
]


def answering(config: ConfigOption = None) -> None:
    """Show the chat endpoint's model and health, and this period's spending per caller."""
    try:
        with Services.open(load(config)) as services:
            overview = services.answering_administration().overview()
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None
    if overview.model is None:
        answers.print(
            "chat endpoint: none declared ([Answering] Url); no question is answered",
            markup=False,
        )
    else:
        answers.print(f"chat model: {overview.model}", markup=False, highlight=False)
    if overview.health is None:
        answers.print("chat health: ok")
    else:
        failure, code, since = overview.health
        at = since.isoformat(timespec="seconds")
        answers.print(f"chat health: {failure.value} ({code}) since {at}")
    start = overview.period_start.isoformat(timespec="seconds")
    table = Table("caller", "questions", "tokens", title=f"period from {start}")
    for spend in overview.spent:
        table.add_row(spend.caller, str(spend.runs), str(spend.tokens))
    answers.print(table)
