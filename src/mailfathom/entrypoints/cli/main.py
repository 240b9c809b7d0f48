"""The `mailfathom` / `mfctl` command line."""

from __future__ import annotations

import os
import signal
import threading
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

import mailfathom
from mailfathom.bootstrap import (
    Services,
    require_secrets,
    secrets_to_deliver,
    secrets_to_synchronize,
)
from mailfathom.domain.account_health import (
    REFRESH_TOKEN_UNSAVED,
    AccountHealth,
    AccountWarning,
    HealthState,
    WarningState,
    consent_message,
    refused_message,
    unsaved_message,
)
from mailfathom.domain.config import MAX_SERVE_PROCESSES
from mailfathom.domain.errors import ConsentRequired, MailFathomError, MailServerAuthError
from mailfathom.entrypoints import logs
from mailfathom.entrypoints.cli import demo as demo_command
from mailfathom.entrypoints.cli import serving
from mailfathom.entrypoints.cli.alerts import alerts_app
from mailfathom.entrypoints.cli.answering import answering as answering_command
from mailfathom.entrypoints.cli.consent_command import account_app
from mailfathom.entrypoints.cli.console_command import console_app
from mailfathom.entrypoints.cli.contacts import contact_app
from mailfathom.entrypoints.cli.deployment import ConfigOption
from mailfathom.entrypoints.cli.embedding import embed_with_progress
from mailfathom.entrypoints.cli.folder_check import FoldersNotOnServer, require_folders, show_absent
from mailfathom.entrypoints.cli.importing import import_into_local, synchronize_imported
from mailfathom.entrypoints.cli.init_command import init as init_command
from mailfathom.entrypoints.cli.loading import config_file, load, selected_accounts
from mailfathom.entrypoints.cli.mutations import mutations_app
from mailfathom.entrypoints.cli.operations_option import OpsListenOption, with_ops_listen
from mailfathom.entrypoints.cli.outbox import outbox_app
from mailfathom.entrypoints.cli.progress import sync_with_progress
from mailfathom.entrypoints.cli.reverify import reverify_with_progress
from mailfathom.entrypoints.cli.serving_processes import run_processes
from mailfathom.entrypoints.cli.terminal import (
    answers,
    errors,
    print_uncut,
    say_error,
    set_quiet,
    status,
    status_err,
)
from mailfathom.entrypoints.cli.worker_command import worker as worker_command
from mailfathom.entrypoints.workers.background import wait_stopped
from mailfathom.entrypoints.workers.delivery import run_delivery
from mailfathom.entrypoints.workers.synchronization import start_sync_threads

app = typer.Typer(
    name="mailfathom",
    help="A synchronized, indexed local copy of mailboxes.",
    no_args_is_help=True,
    add_completion=False,
)
mailbox_app = typer.Typer(help="Work on stored mail.", no_args_is_help=True)
app.add_typer(mailbox_app, name="mailbox")
app.add_typer(outbox_app, name="outbox")
app.add_typer(alerts_app, name="alerts")
app.add_typer(mutations_app, name="mutations")
app.add_typer(contact_app, name="contact")
app.add_typer(account_app, name="account")
app.add_typer(console_app, name="console")
app.command("init")(init_command)
app.command("answering")(answering_command)
app.command("worker")(worker_command)


def _show_version(asked: bool) -> None:
    if asked:
        answers.print(f"mailfathom {mailfathom.__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _setup(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="For scripts: no banner, no progress, no log lines below ERROR; errors and "
            "what a command was asked for are still printed.",
        ),
    ] = False,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            help="debug, info, warning, error or critical (default: $MAILFATHOM_LOG_LEVEL, "
            "else info). On a terminal, asking for a level shows log lines there instead "
            "of in the data directory's mailfathom.log.",
        ),
    ] = None,
) -> None:
    set_quiet(quiet)
    try:
        logs.configure(level=log_level, quiet=quiet)
    except MailFathomError as error:
        _fail(error)


AccountOption = Annotated[
    list[str] | None, typer.Option("--account", "-a", help="Limit to this account (repeatable).")
]


_HEALTH_TEXT = {
    HealthState.CONSENT_REQUIRED: "needs consent",
    HealthState.CREDENTIALS_REFUSED: "login refused",
}


# Warnings hold nothing back: the account still synchronizes and sends.
_WARNING_TEXT = {WarningState.REFRESH_TOKEN_UNSAVED: "refresh token not saved"}


def _health_text(health: AccountHealth | None, warnings: list[AccountWarning]) -> str:
    held = "ok" if health is None else _HEALTH_TEXT[health.state]
    return "; ".join([held, *(_WARNING_TEXT[w.state] for w in warnings)])


def _state_line(text: str, code: int, since: datetime) -> str:
    return f"{text} ({code}) since {since.isoformat(timespec='seconds')}"


def _say_states(
    account_ids: list[str],
    held: dict[str, AccountHealth],
    warned: dict[str, list[AccountWarning]],
) -> None:
    """A line per account's state and warning; then, on standard error, what to do about a
    refresh token not saved."""
    for account_id in account_ids:
        h = held.get(account_id)
        if h is not None:
            answers.print(f"{account_id}: {_state_line(_HEALTH_TEXT[h.state], h.code, h.since)}")
        for w in warned.get(account_id, []):
            answers.print(f"{account_id}: {_state_line(_WARNING_TEXT[w.state], w.code, w.since)}")
    unsaved = [
        account_id
        for account_id in account_ids
        if any(w.state is WarningState.REFRESH_TOKEN_UNSAVED for w in warned.get(account_id, []))
    ]
    if unsaved:
        say_error(f"MailFathom warning {REFRESH_TOKEN_UNSAVED}: {unsaved_message(unsaved)}")


def _held_error(held: list[AccountHealth]) -> MailFathomError:
    """The refused grants first: they need the person, a refused login the operator."""
    consent = [h.account_id for h in held if h.state is HealthState.CONSENT_REQUIRED]
    if consent:
        return ConsentRequired(consent_message(consent))
    return MailServerAuthError(refused_message([h.account_id for h in held]))


def _fail(error: MailFathomError) -> None:
    say_error(str(error))
    if isinstance(error, FoldersNotOnServer):
        show_absent(errors, error)
    raise typer.Exit(code=2)


@app.command()
def demo(
    data_dir: Annotated[Path, typer.Option(help="Where the demo deployment lives.")] = Path(
        "./mailfathom-demo"
    ),
    messages: Annotated[int, typer.Option(help="How many messages to generate.")] = 100,
    serve: Annotated[
        bool, typer.Option("--serve/--no-serve", help="Serve the MCP tools afterwards.")
    ] = True,
    port: Annotated[int, typer.Option(help="Port of the demo's MCP endpoint.")] = 8625,
    chat_url: Annotated[
        str | None,
        typer.Option(
            envvar="MAILFATHOM_DEMO_CHAT_URL",
            help="A chat-completions endpoint answering ask_mail (http://127.0.0.1:11434/v1).",
        ),
    ] = None,
    chat_model: Annotated[
        str | None,
        typer.Option(envvar="MAILFATHOM_DEMO_CHAT_MODEL", help="The model it is asked for."),
    ] = None,
    chat_key_env: Annotated[
        str | None,
        typer.Option(
            envvar="MAILFATHOM_DEMO_CHAT_KEY_ENV",
            help="The environment variable holding its key (none: no key is sent).",
        ),
    ] = None,
) -> None:
    """Create a local demo deployment, synchronize and embed it, and serve its MCP tools."""
    if (chat_url is None) != (chat_model is None) or (chat_key_env and chat_url is None):
        raise typer.BadParameter("--chat-url and --chat-model go together (--chat-key-env too).")
    chat = (
        None
        if chat_url is None or chat_model is None
        else (demo_command.ChatEndpoint(chat_url, chat_model, chat_key_env))
    )
    try:
        demo_command.run(data_dir, messages, status, serve=serve, port=port, chat=chat)
    except MailFathomError as error:
        _fail(error)


@app.command()
def sync(
    config: ConfigOption = None,
    account: AccountOption = None,
    continuous: Annotated[
        bool, typer.Option("--continuous", help="Keep running: push or polling per account.")
    ] = False,
) -> None:
    """Synchronize accounts once (with progress), or continuously."""
    try:
        deployment = load(config)
        accounts = selected_accounts(deployment, account)
        if not deployment.sync.enabled:
            say_error("Synchronization is disabled in the configuration.")
            raise typer.Exit(code=1)
        require_secrets(secrets_to_synchronize(accounts))
        with Services.open(deployment) as services:
            require_folders(services, accounts)
            if not continuous:
                for acc in accounts:
                    sync_with_progress(services, acc, status)
                return
            stop = threading.Event()
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: stop.set())
            workers = start_sync_threads(services, accounts, stop)
            status.print(f"Synchronizing {len(accounts)} account(s); stop with Ctrl-C.")
            while any(w.is_alive() for w in workers) and not stop.is_set():
                stop.wait(1.0)
            stop.set()
            wait_stopped(workers)
    except MailFathomError as error:
        _fail(error)


@app.command("accounts")
def list_accounts(config: ConfigOption = None) -> None:
    """List accounts and their folders, with when each folder last committed progress."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            overview = services.maintenance().overview
            held = {h.account_id: h for h in services.account_health()}
            warned: dict[str, list[AccountWarning]] = {}
            for warning in services.account_warnings():
                warned.setdefault(warning.account_id, []).append(warning)
            failed = {(f.account_id, f.folder_id): f for f in services.sync_failures().failures()}
            table = Table(
                "account",
                "health",
                "folder",
                "role",
                "tools",
                "messages",
                "last progress",
                "failure",
            )
            for acc in deployment.accounts:
                health = _health_text(held.get(acc.account_id), warned.get(acc.account_id, []))
                if not acc.folders:
                    table.add_row(acc.account_id, health, "(no folders mapped)", "", "", "", "", "")
                for line in overview.folders(acc):
                    mapping, when = line.mapping, line.last_committed_at
                    failure = failed.get((acc.account_id, line.folder_id))
                    table.add_row(
                        acc.account_id,
                        health,
                        mapping.alias,
                        mapping.role.value if mapping.role else "",
                        "visible" if mapping.visible_to_tools else "withheld",
                        str(line.messages),
                        when.isoformat(timespec="seconds") if when else "never",
                        str(failure.code) if failure is not None else "",
                    )
            print_uncut(table)
            waiting = [a.account_id for a in deployment.accounts if a.account_id in held]
            _say_states([a.account_id for a in deployment.accounts], held, warned)
            # An account whose new refresh token only a running process holds is not logged in
            # to from here: this process would present the replaced one.
            require_folders(
                services,
                [
                    a
                    for a in deployment.accounts
                    if a.account_id not in held and a.account_id not in warned
                ],
            )
            if waiting:
                raise _held_error([held[a] for a in waiting])
    except MailFathomError as error:
        _fail(error)


@mailbox_app.command("rederive")
def rederive(config: ConfigOption = None, account: AccountOption = None) -> None:
    """Re-assemble conversations of stored mail from its message identifiers."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            rederivation = services.maintenance().rederivation
            for acc in selected_accounts(deployment, account):
                count = rederivation.rederive(acc.account_id)
                answers.print(f"{acc.account_id}: {count} messages placed in conversations")
    except MailFathomError as error:
        _fail(error)


@mailbox_app.command("reverify")
def reverify(config: ConfigOption = None, account: AccountOption = None) -> None:
    """Verify the sender and assess the text of stored mail again; resumes if interrupted."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            for acc in selected_accounts(deployment, account):
                reverify_with_progress(services, acc, answers)
    except MailFathomError as error:
        _fail(error)


@mailbox_app.command("embed")
def embed(config: ConfigOption = None) -> None:
    """Embed stored mail in the active profile's space, to the end; resumes if interrupted."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            embed_with_progress(services, answers)
    except MailFathomError as error:
        _fail(error)


@mailbox_app.command("verify")
def verify(config: ConfigOption = None, account: AccountOption = None) -> None:
    """Check every stored message's content; a bad copy is fetched again by the next sync."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            maintenance = services.maintenance()
            swept = maintenance.content_upkeep.tidy()
            if swept:
                answers.print(f"Removed {swept} left-over or compacted content file(s).")
            reader = maintenance.content_check
            for acc in selected_accounts(deployment, account):
                checked = reader.check_account(acc.account_id)
                answers.print(
                    f"{acc.account_id}: {checked.bad} stored message(s) queued for repair, "
                    f"of {checked.checked} checked",
                    highlight=False,
                )
    except MailFathomError as error:
        _fail(error)


@app.command("import")
def import_mail(
    source: Annotated[
        Path,
        typer.Argument(help="A Maildir, a folder of .eml files, an .eml file or an mbox file."),
    ],
    account: Annotated[str, typer.Option("--account", "-a", help="The local account.")],
    folder: Annotated[str, typer.Option("--folder", "-f", help="Remote name of the folder.")] = (
        "INBOX"
    ),
    config: ConfigOption = None,
) -> None:
    """Import existing mail into a local account, then synchronize it."""
    try:
        deployment = load(config)
        with Services.open(deployment) as services:
            count = import_into_local(services, account, folder, source)
            answers.print(
                f"Imported {count.added} new message(s); "
                f"{count.already_held} were already in the folder."
            )
            (acc,) = selected_accounts(deployment, [account])
            synchronize_imported(services, acc, status)
    except MailFathomError as error:
        _fail(error)


@app.command()
def serve(
    config: ConfigOption = None,
    stdio: Annotated[
        bool, typer.Option("--stdio", help="Speak MCP on stdin/stdout for a desktop client.")
    ] = False,
    port: Annotated[
        int | None, typer.Option(help="Listen on this port instead of McpEndpoint.Listen's.")
    ] = None,
    sync: Annotated[
        bool,
        typer.Option(
            "--sync/--no-sync",
            help="Keep every account synchronized (push or polling, as configured) in this "
            "process. Turn off when another process runs `sync --continuous`.",
        ),
    ] = True,
    deliver: Annotated[
        bool,
        typer.Option(
            "--deliver/--no-deliver",
            help="Run the delivery pass in this process when an account may send. Turn off "
            "when another process runs `deliver`.",
        ),
    ] = True,
    ops_listen: OpsListenOption = None,
    processes: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_SERVE_PROCESSES,
            help="Answer calls in this many processes on the one address (PostgreSQL only) "
            "instead of McpEndpoint.Processes.",
        ),
    ] = None,
) -> None:
    """Serve the MCP tools over Streamable HTTP (McpEndpoint.Listen), or over stdio, while
    synchronizing the accounts and delivering queued sends."""
    try:
        deployment = with_ops_listen(load(config), ops_listen)
        count = processes if processes is not None else deployment.mcp.processes
        plan = serving.prepare(deployment, stdio=stdio, sync=sync, deliver=deliver, processes=count)
        with Services.open(deployment) as services:
            require_folders(services, plan.accounts)
            if count > 1:
                run_processes(
                    services, plan, status_err,
                    config_path=config_file(config).resolve(), processes=count, port=port,
                )  # fmt: skip
            else:
                serving.run(services, plan, status_err, stdio=stdio, port=port)
    except MailFathomError as error:
        _fail(error)


@app.command("deliver")
def deliver_command(
    config: ConfigOption = None,
    once: Annotated[bool, typer.Option("--once", help="Run one pass, then stop.")] = False,
    interval: Annotated[
        float, typer.Option(help="Seconds an idle worker waits before looking again.")
    ] = 5.0,
) -> None:
    """Offer queued sends to where they go: peer mailboxes and submission servers."""
    try:
        deployment = load(config)
        require_secrets(secrets_to_deliver(deployment))
        with Services.open(deployment) as services:
            if once:
                report = services.delivery_pass().run_once()
                answers.print(
                    f"claimed {report.claimed}: sent {report.sent}, failed {report.failed}, "
                    f"waiting to retry {report.retried}"
                )
                return
            stop = threading.Event()
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, lambda *_: stop.set())
            run_delivery(services, stop, interval=interval)
    except MailFathomError as error:
        _fail(error)


@app.command()
def migrate(config: ConfigOption = None) -> None:
    """Bring the database to the latest schema."""
    try:
        with Services.open(load(config)):
            status.print("The store is at the latest schema.")
    except MailFathomError as error:
        _fail(error)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    app()
