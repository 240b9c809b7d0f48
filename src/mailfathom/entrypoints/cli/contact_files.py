"""The files `mfctl contact import` reads and `mfctl contact export` writes.

An exported book is personal data about everybody in it, so the file is made readable by its
owner alone, and it appears whole or not at all: it is written beside its final name and moved
there, so a failed export never leaves half a book where a good one was.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import MailFathomError
from mailfathom.entrypoints.cli.terminal import answers, say_error, status_err

STDIO = Path("-")


def _unusable(message: str) -> typer.Exit:
    say_error(str(MailFathomError(message, code=int(CommandCode.CARD_FILE_UNUSABLE))))
    return typer.Exit(code=2)


def take(source: Path) -> bytes:
    """The whole file to import (standard input for `-`)."""
    if source == STDIO:
        return sys.stdin.buffer.read()
    try:
        return source.read_bytes()
    except OSError:
        raise _unusable("The file to import cannot be read.") from None


def deliver(data: bytes, output: Path | None, contacts: int) -> None:
    """The exported book on standard output, or in `output`; the count is said on standard
    error in the first case, so standard output holds the cards alone."""
    if output is None or output == STDIO:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        status_err.print(f"Exported {contacts} contact(s).", highlight=False)
        return
    partial = output.with_name(f".{output.name}.partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, output)
    except OSError:
        partial.unlink(missing_ok=True)
        raise _unusable("The export file cannot be written.") from None
    answers.print(
        f"Exported {contacts} contact(s) to {output}.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
