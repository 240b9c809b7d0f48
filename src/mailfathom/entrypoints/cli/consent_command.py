"""`mfctl account consent`: granting an OAuth account access again.

A provider stops accepting a refresh token when the person revokes the grant, an
administrator or a password change ends it, or its own rules let it lapse; the account's
health then says consent is needed, and nothing retries it. This command asks the person
again, with the flow `init` used (or the one asked for) and the account's own client and
scopes, writes the new refresh token over the account's file in one step, checks the IMAP
login with it, and only then clears the account's health.

An account whose refresh token is read from an environment variable cannot be changed from
here: the new token is written to a file (owner only) for the operator to move, and the
health is left for the account's next successful login to clear.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from mailfathom.bootstrap import (
    OAuthClient,
    Services,
    check_secret_place,
    read_secret,
    write_over_secret_file,
)
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import AccountConfig, DeploymentConfig
from mailfathom.domain.errors import ConfigurationError, MailFathomError
from mailfathom.entrypoints.cli.granting import (
    GrantPlan,
    choose_flow,
    default_refresh_token_file,
    obtain_grant,
)
from mailfathom.entrypoints.cli.init_oauth_answers import flow_named
from mailfathom.entrypoints.cli.interrupts import handled, held, interrupted
from mailfathom.entrypoints.cli.loading import load, selected_accounts
from mailfathom.entrypoints.cli.terminal import answers, errors, say_error

account_app = typer.Typer(help="Work on one configured account.", no_args_is_help=True)


def _say(text: str) -> None:
    answers.print(text, markup=False, highlight=False, soft_wrap=True)


def _oauth_account(deployment: DeploymentConfig, name: str) -> AccountConfig:
    (account,) = selected_accounts(deployment, [name])
    if account.oauth is None or account.imap is None:
        raise ConfigurationError(
            f"Account '{account.account_id}' does not log in with OAuth; there is no access "
            "to grant again.",
            code=int(CommandCode.ACCOUNT_NOT_OAUTH),
        )
    return account


def grant_again(
    deployment: DeploymentConfig,
    name: str,
    flow: str | None,
    refresh_token_file: Path | None,
    *,
    interactive: bool,
) -> None:
    account = _oauth_account(deployment, name)
    oauth = account.oauth
    assert oauth is not None
    assert account.imap is not None
    secret = None if oauth.client_secret is None else read_secret(oauth.client_secret)
    plan = GrantPlan.at(oauth.provider, OAuthClient(oauth.client_id, oauth.scopes, secret), oauth)
    chosen = choose_flow(plan, flow_named(flow))
    in_file = oauth.refresh_token.file
    target = in_file or refresh_token_file
    if target is None:
        target = default_refresh_token_file(deployment.store.data_dir, account.account_id)
    check_secret_place(target, new=False)
    grant = obtain_grant(plan, chosen, _say, interactive=interactive)
    try:
        with held():
            write_over_secret_file(target, grant.refresh_token)
        _check_new_grant(deployment, account, target)
    except KeyboardInterrupt:
        raise interrupted(
            errors,
            f"Interrupted after the new refresh token was written to {target}; the account "
            "is released at its next successful login.",
        ) from None


def _check_new_grant(deployment: DeploymentConfig, account: AccountConfig, target: Path) -> None:
    oauth = account.oauth
    assert oauth is not None
    if oauth.refresh_token.file is None:
        _say(
            f"The new refresh token was written to {target} (readable by its owner only). "
            f"Put that file's content in {oauth.refresh_token.env} where the processes that "
            "run sync and serve get their environment, then delete the file; the account's "
            "health clears at its next login."
        )
        return
    _say(f"The new refresh token is in {target}. Checking the IMAP login with it ...")
    with Services.open(deployment) as services:
        # The login with the new grant is what releases the account, as any login would.
        services.connectors.open(account).close()
    _say(f"Account '{account.account_id}' logs in again; it is no longer held back.")


@account_app.command("consent")
def consent(
    account: Annotated[
        str, typer.Option("--account", "-a", help="The account to grant access again.")
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Configuration file (default: $MAILFATHOM_CONFIG)."),
    ] = None,
    flow: Annotated[
        str | None,
        typer.Option(
            help="device or loopback (default: device where the provider offers it for mail)."
        ),
    ] = None,
    refresh_token_file: Annotated[
        Path | None,
        typer.Option(
            help="Where to write the new refresh token when the account reads it from an "
            "environment variable (default: secrets/ACCOUNT.refresh beside the data "
            "directory)."
        ),
    ] = None,
    non_interactive: Annotated[
        bool, typer.Option("--non-interactive", help="Never open a browser; print the address.")
    ] = False,
) -> None:
    """Ask the person to grant an OAuth account access again, after the provider stopped
    accepting its refresh token; the new one replaces the old."""
    try:
        deployment = load(config)
        interactive = not non_interactive and sys.stdin.isatty()
        with handled():
            grant_again(deployment, account, flow, refresh_token_file, interactive=interactive)
    except MailFathomError as error:
        say_error(str(error))
        raise typer.Exit(code=2) from None
    except KeyboardInterrupt:
        raise interrupted(
            errors, "Interrupted; the account's refresh token is as it was."
        ) from None
