"""Asking `mailfathom init`'s questions: a flag's value first, else a person at a terminal,
else the default, else a coded refusal naming the flag.

A secret is never asked for or taken as a flag: only where it is kept, an environment
variable's name or a file's path. An answer that names a variable which is not set, or a
file which does not exist, is asked again: a password typed by mistake would otherwise be
written into the file as a variable's name or a file's path.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import SecretRef, TlsMode
from mailfathom.domain.errors import ConfigurationError

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Ask = Callable[[str, str | None, Sequence[str] | None], str]


def is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class AnswerMissing(ConfigurationError):
    code = int(CommandCode.INIT_ANSWER_MISSING)


class AnswerNotUsable(ConfigurationError):
    code = int(CommandCode.INIT_ANSWER_NOT_USABLE)


class Questions:
    """Answers from flags first, then from `ask` (None: nobody to ask)."""

    def __init__(self, ask: Ask | None) -> None:
        self.ask = ask

    def value(
        self,
        given: str | None,
        flag: str,
        question: str,
        default: str | None = None,
        choices: Sequence[str] | None = None,
    ) -> str:
        if given is not None:
            return given
        if self.ask is None:
            if default is not None:
                return default
            raise AnswerMissing(f"{flag} is needed when init does not prompt.")
        return self.ask(question, default, choices)

    def security(self, given: str | None, flag: str, question: str, default: TlsMode) -> TlsMode:
        names = [m.value for m in TlsMode]
        text = self.value(given, flag, question, default.value, names)
        chosen = next((m for m in TlsMode if m.value == text.strip().lower()), None)
        if chosen is None:
            raise AnswerNotUsable(f"{flag} must be one of {', '.join(names)}.")
        return chosen

    def port(self, given: int | None, flag: str, question: str, default: int) -> int:
        text = self.value(None if given is None else str(given), flag, question, str(default))
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            raise AnswerNotUsable(f"{flag} must be a port from 1 to 65535.")
        return int(text)

    def secret(
        self, env: str | None, file: Path | None, flags: str, question: str, origin: str
    ) -> SecretRef:
        if env is not None and file is not None:
            raise AnswerNotUsable(f"Give one of {flags}, not both.")
        if env is not None:
            if not ENV_NAME.fullmatch(env):
                raise AnswerNotUsable(f"{flags.split(' or ')[0]} must be a variable's name.")
            return SecretRef(env=env, origin=origin)
        if file is not None:
            return SecretRef(file=file.expanduser().absolute(), origin=origin)
        if self.ask is None:
            raise AnswerMissing(f"One of {flags} is needed when init does not prompt.")
        asked = question
        while True:
            where = self.ask(asked, None, None).strip()
            if ENV_NAME.fullmatch(where) and os.environ.get(where):
                return SecretRef(env=where, origin=origin)
            path = Path(where).expanduser()
            if not ENV_NAME.fullmatch(where) and path.is_file():
                return SecretRef(file=path.absolute(), origin=origin)
            asked = (
                "That is neither a variable set in this environment nor an existing file "
                f"(never the password itself). {question}"
            )
