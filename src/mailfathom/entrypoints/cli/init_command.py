"""`mailfathom init`: from nothing to a configuration that serves one's own mail.

It checks what it is told before writing anything: the IMAP server is logged in to and its
folders listed (roles proposed from SPECIAL-USE, see `domain.role_proposal`), the submission
server, when one is given, is logged in to (nothing is sent). Then it writes the configuration
in the loader's own form, loads it back, creates one MCP caller's API key (shown once; the file
keeps its SHA-256) and prints the client configurations (what it writes: `init_document`).
An existing file is never replaced.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.prompt import Confirm, Prompt
from rich.text import Text

from mailfathom.bootstrap import (
    check_submission,
    create_config_file,
    list_server_folders,
    refuse_existing,
)
from mailfathom.domain.api_keys import API_KEY_PREFIX
from mailfathom.domain.config import ImapConnection, TlsMode
from mailfathom.domain.delivery_config import SmtpConnection
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential
from mailfathom.domain.role_proposal import (
    LeftOutFolder,
    ProposedFolder,
    announces_special_use,
    left_out_folders,
    propose_folders,
)
from mailfathom.entrypoints.cli.client_snippets import ClientSnippets, print_snippets
from mailfathom.entrypoints.cli.init_answers import Answers, Flags, gather
from mailfathom.entrypoints.cli.init_document import caller_permissions, document
from mailfathom.entrypoints.cli.init_oauth import (
    GrantedAccess,
    grant_access,
    say_where_the_token_is,
)
from mailfathom.entrypoints.cli.init_oauth_answers import OAuthFlags
from mailfathom.entrypoints.cli.init_questions import AnswerNotUsable, is_loopback
from mailfathom.entrypoints.cli.interrupts import handled, held, interrupted
from mailfathom.entrypoints.cli.terminal import answers, errors

console = answers
err_console = errors
INTERRUPTED = "Interrupted; nothing was written."


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _ask(question: str, default: str | None, choices: Sequence[str] | None) -> str:
    if default is None:
        return Prompt.ask(
            Text(question), console=console, choices=list(choices) if choices else None
        )
    return Prompt.ask(
        Text(question),
        console=console,
        default=default,
        choices=list(choices) if choices else None,
        show_default=bool(default),
    )


def _refuse_clear_text(answers: Answers) -> None:
    """Credentials never cross a network unprotected, not even for the check."""
    for flag, server in (("--imap-security", answers.imap), ("--smtp-security", answers.smtp)):
        if server is not None and server.tls is TlsMode.NONE and not is_loopback(server.host):
            raise AnswerNotUsable(f"{flag} none is allowed only for a loopback host.")


def _show_folders(folders: Sequence[ProposedFolder], special_use: bool) -> None:
    _say("Folders and their roles:")
    for folder in folders:
        if folder.role is None:
            _say(f"  {folder.remote}: a label, synchronized")
            continue
        how = (
            "guessed from its name"
            if folder.guessed
            else (f"announced ({folder.announced_by})" if folder.announced_by else "INBOX")
        )
        _say(f"  {folder.remote}: {folder.role.value}, {how}")
    if not special_use:
        _say(
            "The server announces no special-use folders (RFC 6154); the roles marked "
            "'guessed' come from common folder names: check them in the file."
        )


def _left_out_text(left_out: Sequence[LeftOutFolder]) -> list[str]:
    """Which folders are left out and why, and the entry that keeps one: said when init
    runs and kept in the file's opening comment, where the entry is one edit away."""
    if not left_out:
        return []
    lines = [
        "Not synchronized: these folders show messages that are in other folders too, and "
        "keeping them would store each message again:",
        *(f"  {f.remote} ({f.announced_by})" for f in left_out),
    ]
    every = next((f for f in left_out if f.announced_by == "\\All"), None)
    if every is not None:
        lines.append(f"Mail archived without any label is in {every.remote} alone.")
    example = every or left_out[0]
    lines += [
        "To keep one, append its entry to the file (a message kept in several folders is "
        "still listed once), for example:",
        "  [[Accounts.Folders]]",
        f"  Remote = {json.dumps(example.remote, ensure_ascii=False)}",
    ]
    if example.role is not None:
        lines.append(f"  Role = {json.dumps(example.role.value)}")
    return lines


def _show_caller(answers: Answers) -> None:
    granted = ", ".join(p.value for p in caller_permissions(answers.smtp is not None))
    _say(f"The MCP caller '{answers.caller_name}' may use: {granted}.")
    _say(
        'Confirmation = "ask": a person says yes (Send, Save draft or Cancel) in the client '
        "before any message the caller composes leaves."
    )


def _check_servers(
    answers: Answers, oauth: OAuthCredential | None, prompting: bool
) -> tuple[list[ProposedFolder], list[str]]:
    """Log in to the IMAP server and list its folders, and to the submission server; the
    folders and roles proposed, as kept, and the lines saying which were left out."""
    imap = answers.imap
    auth = ConnectionAuth.PASSWORD if oauth is None else ConnectionAuth.OAUTH2
    _say(f"Checking the IMAP server {imap.host}:{imap.port} ...")
    server_folders = list_server_folders(
        answers.account_id,
        ImapConnection(imap.host, imap.port, imap.username, imap.secret, imap.tls, auth=auth),
        oauth,
    )
    folders = propose_folders(server_folders)
    left_out = _left_out_text(left_out_folders(server_folders))
    _show_folders(folders, announces_special_use(server_folders))
    for line in left_out:
        _say(line)
    if prompting and not Confirm.ask("Keep these folders and roles?", console=console):
        folders = folders[:1]
    if answers.smtp is not None:
        smtp = answers.smtp
        _say(f"Checking the submission server {smtp.host}:{smtp.port} (nothing is sent) ...")
        check_submission(
            answers.account_id,
            SmtpConnection(smtp.host, smtp.port, smtp.username, smtp.secret, smtp.tls, auth=auth),
            credential=oauth,
        )
    return folders, left_out


def run(path: Path, flags: Flags, prompting: bool) -> None:
    """Ask, check and write. Until the configuration is written a Ctrl-C leaves nothing
    behind; from then on it is not heeded: what remains is telling the key, once."""
    path = path.expanduser().absolute()
    refuse_existing(path)
    answers = gather(flags, _ask if prompting else None)
    _refuse_clear_text(answers)
    access = None
    if answers.oauth is not None:
        access = grant_access(path, answers, _say, interactive=prompting)
    written = False
    try:
        if access is not None:
            access.keep()
        folders, left_out = _check_servers(
            answers, access.credential if access else None, prompting
        )
        key = API_KEY_PREFIX + secrets.token_urlsafe(32)
        digest = hashlib.sha256(key.encode()).hexdigest()
        with held(then_raise=False):
            create_config_file(
                path,
                document(answers, folders, digest, access.block if access else None),
                "\n".join(
                    [
                        "Written by `mailfathom init`. Reference: docs/configuration.md.",
                        "Secrets are not in this file, only where they are read from.",
                        *left_out,
                    ]
                ),
            )
            written = True
            _tell(path, answers, access, key)
    except BaseException:
        if access is not None and not written:
            access.discard(_say)
        raise


def _tell(path: Path, answers: Answers, access: GrantedAccess | None, key: str) -> None:
    _say(f"Wrote {path}")
    if access is not None and answers.oauth is not None:
        say_where_the_token_is(access, answers.oauth, _say)
    _show_caller(answers)
    url = f"http://127.0.0.1:{answers.mcp_port}/mcp"
    print_snippets(console, ClientSnippets("mailfathom", url, key, path))
    _say("The API key is shown only this once: the configuration keeps its SHA-256.")
    _say(f"Next: mailfathom sync --config {path}, then mailfathom serve --config {path}")


def init(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Where to write the configuration.")
    ] = Path("mailfathom.toml"),
    non_interactive: Annotated[
        bool, typer.Option("--non-interactive", help="Never prompt; take every value from flags.")
    ] = False,
    imap_host: Annotated[str | None, typer.Option(help="IMAP server host.")] = None,
    imap_port: Annotated[int | None, typer.Option(help="IMAP port (993, or 143).")] = None,
    imap_security: Annotated[
        str | None, typer.Option(help="implicit (default), starttls, or none (loopback only).")
    ] = None,
    imap_user: Annotated[str | None, typer.Option(help="IMAP user name.")] = None,
    imap_secret_env: Annotated[
        str | None, typer.Option(help="Environment variable holding the IMAP password.")
    ] = None,
    imap_secret_file: Annotated[
        Path | None, typer.Option(help="File holding the IMAP password.")
    ] = None,
    smtp_host: Annotated[
        str | None, typer.Option(help="SMTP submission host; without it nothing is sent.")
    ] = None,
    smtp_port: Annotated[int | None, typer.Option(help="SMTP port (587, or 465).")] = None,
    smtp_security: Annotated[
        str | None, typer.Option(help="starttls (default), implicit, or none (loopback only).")
    ] = None,
    smtp_user: Annotated[
        str | None, typer.Option(help="SMTP user name (default: the IMAP user).")
    ] = None,
    smtp_secret_env: Annotated[
        str | None,
        typer.Option(help="Environment variable holding the SMTP password (default: IMAP's)."),
    ] = None,
    smtp_secret_file: Annotated[
        Path | None, typer.Option(help="File holding the SMTP password.")
    ] = None,
    address: Annotated[
        str | None,
        typer.Option(
            help="Address mail is sent as (default: the SMTP or IMAP user, if an address)."
        ),
    ] = None,
    account_id: Annotated[str | None, typer.Option(help="The account's id (default: mail).")] = (
        None
    ),
    display_name: Annotated[str | None, typer.Option(help="The account's display name.")] = None,
    data_dir: Annotated[
        str | None, typer.Option(help="Data directory, relative to the file (default: data).")
    ] = None,
    mcp_port: Annotated[
        int | None, typer.Option(help="Port of the MCP endpoint on 127.0.0.1 (default: 8625).")
    ] = None,
    caller_name: Annotated[
        str | None, typer.Option(help="Name of the MCP caller the key is for (default: agent).")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="Log in with OAuth 2.0 instead of a password: gmail, microsoft or "
            "generic-oauth (see docs/oauth-providers.md).",
            rich_help_panel="OAuth",
        ),
    ] = None,
    client_id: Annotated[
        str | None,
        typer.Option(help="Client id registered with the provider.", rich_help_panel="OAuth"),
    ] = None,
    client_secret_env: Annotated[
        str | None,
        typer.Option(
            help="Environment variable holding the client secret, where there is one.",
            rich_help_panel="OAuth",
        ),
    ] = None,
    client_secret_file: Annotated[
        Path | None,
        typer.Option(help="File holding the client secret.", rich_help_panel="OAuth"),
    ] = None,
    issuer: Annotated[
        str | None,
        typer.Option(
            help="generic-oauth: the authorization server's issuer (its RFC 8414 metadata is "
            "read from there).",
            rich_help_panel="OAuth",
        ),
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help="generic-oauth: a scope to ask for (repeatable).", rich_help_panel="OAuth"
        ),
    ] = None,
    tenant: Annotated[
        str | None,
        typer.Option(
            help="microsoft: common (default), organizations, consumers, or a directory id "
            "or domain.",
            rich_help_panel="OAuth",
        ),
    ] = None,
    flow: Annotated[
        str | None,
        typer.Option(
            help="device (a code typed on any device) or loopback (the browser comes back "
            "to this machine); default: device where the provider offers it for mail.",
            rich_help_panel="OAuth",
        ),
    ] = None,
    refresh_token_file: Annotated[
        Path | None,
        typer.Option(
            help="Where the granted refresh token is written, owner-only (default: "
            "secrets/ACCOUNT.refresh beside the data directory).",
            rich_help_panel="OAuth",
        ),
    ] = None,
    refresh_token_env: Annotated[
        str | None,
        typer.Option(
            help="Have the configuration read the refresh token from this variable; it is "
            "still written to the file, for you to move.",
            rich_help_panel="OAuth",
        ),
    ] = None,
) -> None:
    """Write a configuration for one IMAP account after checking it, with an API key for one
    MCP caller, and print the client configurations. With --provider the account logs in
    with OAuth 2.0: the person grants access once, by a code or in the browser."""
    flags = Flags(
        account_id=account_id,
        display_name=display_name,
        imap_host=imap_host,
        imap_port=imap_port,
        imap_security=imap_security,
        imap_user=imap_user,
        imap_secret_env=imap_secret_env,
        imap_secret_file=imap_secret_file,
        smtp_host=smtp_host,
        smtp_port=smtp_port,
        smtp_security=smtp_security,
        smtp_user=smtp_user,
        smtp_secret_env=smtp_secret_env,
        smtp_secret_file=smtp_secret_file,
        address=address,
        data_dir=data_dir,
        mcp_port=mcp_port,
        caller_name=caller_name,
        oauth=OAuthFlags(
            provider=provider,
            client_id=client_id,
            client_secret_env=client_secret_env,
            client_secret_file=client_secret_file,
            issuer=issuer,
            scopes=tuple(scope or ()),
            tenant=tenant,
            flow=flow,
            refresh_token_file=refresh_token_file,
            refresh_token_env=refresh_token_env,
        ),
    )
    prompting = not non_interactive and sys.stdin.isatty()
    try:
        with handled():
            run(config, flags, prompting)
    except MailFathomError as error:
        err_console.print(str(error), markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(code=2) from None
    except KeyboardInterrupt:
        raise interrupted(err_console, INTERRUPTED) from None
