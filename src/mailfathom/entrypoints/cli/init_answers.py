"""What `mailfathom init` needs to know, taken from flags or, at a terminal, asked for.

Every value a flag gives is used as given; a missing one is asked for only when a person can
answer (standard input is a terminal and `--non-interactive` was not given). Otherwise the
command stops at once, naming the flag, instead of waiting for input that will never come.

A secret is never asked for or taken as a flag: only where it is kept, an environment
variable's name or a file's path. An answer that names a variable which is not set, or a
file which does not exist, is asked again: a password typed by mistake would otherwise be
written into the file as a variable's name or a file's path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import SecretRef, TlsMode
from mailfathom.domain.errors import ConfigurationError

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ACCOUNT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
IMAP_PORTS = {TlsMode.IMPLICIT: 993, TlsMode.STARTTLS: 143, TlsMode.NONE: 143}
SMTP_PORTS = {TlsMode.IMPLICIT: 465, TlsMode.STARTTLS: 587, TlsMode.NONE: 25}

Ask = Callable[[str, str | None, Sequence[str] | None], str]


class AnswerMissing(ConfigurationError):
    code = int(CommandCode.INIT_ANSWER_MISSING)


class AnswerNotUsable(ConfigurationError):
    code = int(CommandCode.INIT_ANSWER_NOT_USABLE)


@dataclass(frozen=True, slots=True)
class Server:
    host: str
    port: int
    tls: TlsMode
    username: str
    secret: SecretRef


@dataclass(frozen=True, slots=True)
class Answers:
    account_id: str
    display_name: str
    imap: Server
    smtp: Server | None
    address: str | None
    data_dir: str
    mcp_port: int
    caller_name: str


@dataclass
class Flags:
    """The command line's values; None where a flag was not given."""

    account_id: str | None = None
    display_name: str | None = None
    imap_host: str | None = None
    imap_port: int | None = None
    imap_security: str | None = None
    imap_user: str | None = None
    imap_secret_env: str | None = None
    imap_secret_file: Path | None = None
    smtp_host: str | None = None
    smtp_port: int | None = None
    smtp_security: str | None = None
    smtp_user: str | None = None
    smtp_secret_env: str | None = None
    smtp_secret_file: Path | None = None
    address: str | None = None
    data_dir: str | None = None
    mcp_port: int | None = None
    caller_name: str | None = None


class Questions:
    """Answers from flags first, then from `ask` (None: nobody to ask)."""

    def __init__(self, flags: Flags, ask: Ask | None) -> None:
        self.flags = flags
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
            if not _ENV_NAME.fullmatch(env):
                raise AnswerNotUsable(f"{flags.split(' or ')[0]} must be a variable's name.")
            return SecretRef(env=env, origin=origin)
        if file is not None:
            return SecretRef(file=file.expanduser().absolute(), origin=origin)
        if self.ask is None:
            raise AnswerMissing(f"One of {flags} is needed when init does not prompt.")
        asked = question
        while True:
            where = self.ask(asked, None, None).strip()
            if _ENV_NAME.fullmatch(where) and os.environ.get(where):
                return SecretRef(env=where, origin=origin)
            path = Path(where).expanduser()
            if not _ENV_NAME.fullmatch(where) and path.is_file():
                return SecretRef(file=path.absolute(), origin=origin)
            asked = (
                "That is neither a variable set in this environment nor an existing file "
                f"(never the password itself). {question}"
            )


def gather(flags: Flags, ask: Ask | None) -> Answers:
    q = Questions(flags, ask)
    f = flags
    imap_host = q.value(f.imap_host, "--imap-host", "IMAP server host name")
    imap_tls = q.security(
        f.imap_security, "--imap-security", "IMAP connection security", TlsMode.IMPLICIT
    )
    imap_port = q.port(f.imap_port, "--imap-port", "IMAP port", IMAP_PORTS[imap_tls])
    imap_user = q.value(f.imap_user, "--imap-user", "IMAP user name")
    imap_secret = q.secret(
        f.imap_secret_env,
        f.imap_secret_file,
        "--imap-secret-env or --imap-secret-file",
        "Where the IMAP password is kept: an environment variable's name, or a file's path",
        "Accounts[0].Imap.Secret",
    )
    imap = Server(imap_host, imap_port, imap_tls, imap_user, imap_secret)
    smtp_host = q.value(
        f.smtp_host, "--smtp-host", "SMTP submission host (leave empty: no sending)", ""
    ).strip()
    smtp = None
    address = f.address
    if smtp_host:
        smtp_tls = q.security(
            f.smtp_security, "--smtp-security", "SMTP connection security", TlsMode.STARTTLS
        )
        smtp_port = q.port(f.smtp_port, "--smtp-port", "SMTP port", SMTP_PORTS[smtp_tls])
        smtp_user = q.value(f.smtp_user, "--smtp-user", "SMTP user name", imap_user)
        if f.smtp_secret_env is None and f.smtp_secret_file is None and ask is None:
            smtp_secret = SecretRef(
                imap_secret.env, imap_secret.file, "Accounts[0].Delivery.Smtp.Secret"
            )
        else:
            smtp_secret = q.secret(
                f.smtp_secret_env,
                f.smtp_secret_file,
                "--smtp-secret-env or --smtp-secret-file",
                "Where the SMTP password is kept: an environment variable's name, or a file's path",
                "Accounts[0].Delivery.Smtp.Secret",
            )
        smtp = Server(smtp_host, smtp_port, smtp_tls, smtp_user, smtp_secret)
        fallback = next((u for u in (smtp_user, imap_user) if "@" in u), None)
        address = q.value(address, "--address", "Address mail is sent as", fallback)
    account_id = q.value(
        f.account_id, "--account-id", "Account id (letters, digits, . _ -)", "mail"
    )
    if not _ACCOUNT_ID.fullmatch(account_id):
        raise AnswerNotUsable("--account-id must be 1 to 64 letters, digits, '.', '_' or '-'.")
    display_name = q.value(f.display_name, "--display-name", "Display name", account_id)
    data_dir = q.value(
        f.data_dir, "--data-dir", "Data directory (relative to the configuration file)", "data"
    )
    mcp_port = q.port(f.mcp_port, "--mcp-port", "Port of the MCP endpoint on 127.0.0.1", 8625)
    caller = q.value(f.caller_name, "--caller-name", "Name of the MCP caller", "agent")
    return Answers(account_id, display_name, imap, smtp, address, data_dir, mcp_port, caller)
