"""`mailfathom console set-password`: the owner password of the web console;
`mailfathom console first-passkey`: a one-time code for creating the owner's first passkey
instead (printed, never stored: only its SHA-256 is).

The password is read from standard input, never from an argument (which other users of the
machine can read in the process list) and never echoed: at a terminal it is asked for twice
without echo; otherwise the first line of standard input is the password, so a password
manager or a file can supply it (`... set-password < file`). Only its argon2id hash is
stored, and every console session ends with the change."""

from __future__ import annotations

import getpass
import sys

import typer

from mailfathom.bootstrap import Services
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.errors import ConfigurationError, MailFathomError
from mailfathom.domain.passkeys import FIRST_PASSKEY_CODE_SECONDS
from mailfathom.entrypoints.cli.deployment import ConfigOption
from mailfathom.entrypoints.cli.loading import load
from mailfathom.entrypoints.cli.terminal import answers, say_error

console_app = typer.Typer(
    help="The owner's web console (served by `serve` while [Console] is enabled).",
    no_args_is_help=True,
)


def _not_usable(reason: str) -> ConfigurationError:
    return ConfigurationError(reason, code=int(CommandCode.CONSOLE_PASSWORD_NOT_USABLE))


def read_password() -> str:
    """The new password from standard input: asked twice without echo at a terminal, the
    first line otherwise (its line ending removed)."""
    if sys.stdin.isatty():
        first = getpass.getpass("New owner password: ")
        if getpass.getpass("The same again: ") != first:
            raise _not_usable("The two passwords typed differ; nothing was changed.")
        return first
    line = sys.stdin.readline()
    if not line:
        raise _not_usable("No password was read from standard input; nothing was changed.")
    return line.removesuffix("\n").removesuffix("\r")


@console_app.command("set-password")
def set_password(config: ConfigOption = None) -> None:
    """Set the owner password from standard input and sign everyone out of the console."""
    try:
        deployment = load(config)
        password = read_password()
        with Services.open(deployment) as services:
            services.console_access().set_password(password)
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None
    answers.print(
        "The owner password is set; every console session has ended.",
        markup=False,
        highlight=False,
    )


@console_app.command("first-passkey")
def first_passkey(config: ConfigOption = None) -> None:
    """Print a one-time code for creating the owner's first passkey on the console's sign-in
    page from this machine (instead of a password), good for 15 minutes."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            code = services.console_passkeys().first_enrolment_code()
        if code is None:
            raise ConfigurationError(
                "The owner has a password or a passkey already: add passkeys on the "
                "console's Passkeys page, signed in.",
                code=int(CommandCode.CONSOLE_FIRST_PASSKEY_CLOSED),
            )
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None
    minutes = FIRST_PASSKEY_CODE_SECONDS // 60
    answers.print(
        f"One-time code: {code}\nOpen the console's sign-in page on this machine within "
        f"{minutes} minutes, enter the code and create the owner's passkey.",
        markup=False,
        highlight=False,
    )
