"""What the administration commands share: the `--config` option, and running a piece of work
on the deployment that configuration opens."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from mailfathom.bootstrap import Services
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.loading import load
from mailfathom.entrypoints.cli.terminal import say_error

T = TypeVar("T")

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
]


def with_services(config: Path | None, work: Callable[[Services], T]) -> T:
    """Run `work` on the deployment; a refusal, a configuration or a store failure ends the
    command with its line and exit status 2."""
    try:
        with Services.open(load(config)) as services:
            return work(services)
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None


def identifier(text: str, refusal: str) -> uuid.UUID:
    """`text` as a record's identifier, or the command ends with `refusal` and status 2."""
    try:
        return uuid.UUID(text)
    except ValueError:
        say_error(refusal)
        raise typer.Exit(code=2) from None
