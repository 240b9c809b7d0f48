"""What `mailfathom init` needs to know, taken from flags or, at a terminal, asked for.

Every value a flag gives is used as given; a missing one is asked for only when a person can
answer (standard input is a terminal and `--non-interactive` was not given). Otherwise the
command stops at once, naming the flag, instead of waiting for input that will never come.

With `--provider` the account logs in with OAuth: the servers default to the provider's,
no password is asked for, and the OAuth questions (`init_oauth_answers`) follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from mailfathom.domain.config import SecretRef, TlsMode
from mailfathom.domain.oauth_providers import ServerPreset
from mailfathom.entrypoints.cli.init_oauth_answers import (
    OAuthAnswers,
    OAuthFlags,
    gather_oauth,
    preset_of,
    provider_named,
)
from mailfathom.entrypoints.cli.init_questions import AnswerNotUsable, Ask, Questions

_ACCOUNT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
IMAP_PORTS = {TlsMode.IMPLICIT: 993, TlsMode.STARTTLS: 143, TlsMode.NONE: 143}
SMTP_PORTS = {TlsMode.IMPLICIT: 465, TlsMode.STARTTLS: 587, TlsMode.NONE: 25}


@dataclass(frozen=True, slots=True)
class Server:
    """A server and its login; `secret` is None where it logs in with OAuth."""

    host: str
    port: int
    tls: TlsMode
    username: str
    secret: SecretRef | None


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
    oauth: OAuthAnswers | None = None


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
    oauth: OAuthFlags = field(default_factory=OAuthFlags)


def _secret_flags_refused(f: Flags) -> None:
    """With OAuth nothing logs in with a password: a password flag is a mistake to name."""
    for name, value in (
        ("--imap-secret-env", f.imap_secret_env),
        ("--imap-secret-file", f.imap_secret_file),
        ("--smtp-secret-env", f.smtp_secret_env),
        ("--smtp-secret-file", f.smtp_secret_file),
    ):
        if value is not None:
            raise AnswerNotUsable(f"{name} is not used with --provider: OAuth replaces it.")


def _server_defaults(preset: ServerPreset | None, tls: TlsMode, ports: dict[TlsMode, int]) -> int:
    return preset.port if preset is not None and tls is preset.tls else ports[tls]


def _smtp_secret(q: Questions, f: Flags, imap_secret: SecretRef) -> SecretRef:
    """The submission password: where flags or a person say, else the IMAP one."""
    if f.smtp_secret_env is None and f.smtp_secret_file is None and q.ask is None:
        return SecretRef(imap_secret.env, imap_secret.file, "Accounts[0].Delivery.Smtp.Secret")
    return q.secret(
        f.smtp_secret_env,
        f.smtp_secret_file,
        "--smtp-secret-env or --smtp-secret-file",
        "Where the SMTP password is kept: an environment variable's name, or a file's path",
        "Accounts[0].Delivery.Smtp.Secret",
    )


def gather(flags: Flags, ask: Ask | None) -> Answers:
    q = Questions(ask)
    f = flags
    provider = provider_named(f.oauth.provider)
    preset = None if provider is None else preset_of(provider, f.oauth.tenant)
    if provider is not None:
        _secret_flags_refused(f)
    imap_preset = preset.imap if preset else None
    imap_host = q.value(
        f.imap_host,
        "--imap-host",
        "IMAP server host name",
        imap_preset.host if imap_preset else None,
    )
    imap_tls = q.security(
        f.imap_security,
        "--imap-security",
        "IMAP connection security",
        imap_preset.tls if imap_preset else TlsMode.IMPLICIT,
    )
    imap_port = q.port(
        f.imap_port, "--imap-port", "IMAP port", _server_defaults(imap_preset, imap_tls, IMAP_PORTS)
    )
    imap_user = q.value(f.imap_user, "--imap-user", "IMAP user name")
    imap_secret = None
    if provider is None:
        imap_secret = q.secret(
            f.imap_secret_env,
            f.imap_secret_file,
            "--imap-secret-env or --imap-secret-file",
            "Where the IMAP password is kept: an environment variable's name, or a file's path",
            "Accounts[0].Imap.Secret",
        )
    imap = Server(imap_host, imap_port, imap_tls, imap_user, imap_secret)
    smtp_preset = preset.smtp if preset else None
    smtp_host = q.value(
        f.smtp_host,
        "--smtp-host",
        "SMTP submission host (leave empty: no sending)",
        smtp_preset.host if smtp_preset else "",
    ).strip()
    smtp = None
    address = f.address
    if smtp_host:
        smtp_tls = q.security(
            f.smtp_security,
            "--smtp-security",
            "SMTP connection security",
            smtp_preset.tls if smtp_preset else TlsMode.STARTTLS,
        )
        smtp_port = q.port(
            f.smtp_port,
            "--smtp-port",
            "SMTP port",
            _server_defaults(smtp_preset, smtp_tls, SMTP_PORTS),
        )
        smtp_user = q.value(f.smtp_user, "--smtp-user", "SMTP user name", imap_user)
        smtp_secret = None if imap_secret is None else _smtp_secret(q, f, imap_secret)
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
    oauth = None if provider is None else gather_oauth(q, f.oauth, provider, preset)
    return Answers(account_id, display_name, imap, smtp, address, data_dir, mcp_port, caller, oauth)
