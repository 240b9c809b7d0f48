"""`mfctl account consent`: granting an OAuth account access again.

A provider stops accepting a refresh token when the person revokes the grant, an
administrator or a password change ends it, or its own rules let it lapse; the account's
health then says consent is needed, and nothing retries it. This command asks the person
again, with the flow `init` used (or the one asked for) and the account's own client and
scopes, and tries the login with the new refresh token while it is kept in a file of its
own: a grant the mail server refuses for this account (the person signed in as somebody
else) leaves the working one in place, and is withdrawn at the provider. Only a login the
server accepted has the new refresh token written over the account's file, in one step, and
the account's health cleared, with the warning that a rotated refresh token was not written
(the file holds the token to use now). A trial that fails otherwise (the server unreachable,
Ctrl-C, the file not writable) says nothing of who signed in: the grant may be the account's
own user's, and at Google withdrawing any token of an authorization ends all of it, the
token the account runs on included. That grant is deleted here and left at the provider.

An account whose refresh token is read from an environment variable cannot be changed from
here: the new token, once it logs in, is written to a file (owner only) for the operator to
move, and the health is left for the account's next successful login to clear.
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
    grant_user,
    held_refresh_token,
    read_secret,
    revoke_refresh_token,
    trial_secret_file,
    try_grant,
    write_over_secret_file,
)
from mailfathom.domain.codes import CheckCode, CommandCode
from mailfathom.domain.config import AccountConfig, DeploymentConfig, SecretRef
from mailfathom.domain.errors import (
    ConfigurationError,
    ConsentRequired,
    MailFathomError,
    MailServerAuthError,
    SubmissionCheckFailed,
)
from mailfathom.entrypoints.cli.granting import (
    GrantPlan,
    choose_flow,
    default_refresh_token_file,
    obtain_grant,
)
from mailfathom.entrypoints.cli.init_oauth import say_withdrawn
from mailfathom.entrypoints.cli.init_oauth_answers import flow_named
from mailfathom.entrypoints.cli.interrupts import handled, held, interrupted
from mailfathom.entrypoints.cli.loading import load, selected_accounts
from mailfathom.entrypoints.cli.terminal import answers, errors, say_error

account_app = typer.Typer(help="Work on one configured account.", no_args_is_help=True)


def _say(text: str) -> None:
    answers.print(text, markup=False, highlight=False, soft_wrap=True)


def _oauth_account(deployment: DeploymentConfig, name: str) -> AccountConfig:
    """The account, which must have a connection logging in with its grant (IMAP, or only
    its submission)."""
    (account,) = selected_accounts(deployment, [name])
    if account.oauth is None or grant_user(account) is None:
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
    secret = None if oauth.client_secret is None else read_secret(oauth.client_secret)
    client = OAuthClient(oauth.client_id, oauth.scopes, secret)
    plan = GrantPlan.at(oauth.provider, client, oauth, login_hint=grant_user(account))
    chosen = choose_flow(plan, flow_named(flow))
    in_file = oauth.refresh_token.file
    target = in_file or refresh_token_file
    if target is None:
        target = default_refresh_token_file(deployment.store.data_dir, account.account_id)
    check_secret_place(target, new=False)
    grant = obtain_grant(plan, chosen, _say, interactive=interactive)
    _say("Checking the login with the new grant before it replaces the old ...")
    kept = False
    refused: MailFathomError | None = None
    withdraw = grant.refresh_token
    try:
        with trial_secret_file(target, grant.refresh_token) as trial:
            refused = _refusal(account, SecretRef(file=trial, origin=oauth.refresh_token.origin))
            # The trial's refresh may have rotated the token granted: the one withdrawn is
            # the one the trial holds now, since withdrawing a token rotated out ends nothing.
            withdraw = held_refresh_token(trial, grant.refresh_token)
            if refused is None:
                with held(then_raise=False):
                    write_over_secret_file(target, read_secret(SecretRef(file=trial)))
                    kept = True
                    if in_file is not None:
                        _release(deployment, account.account_id)
    except BaseException:
        if not kept:
            _say(NOT_WITHDRAWN)
        raise
    if refused is not None:
        # Another identity's grant shares no authorization with the account's.
        withdrawn = revoke_refresh_token(oauth.revocation_endpoint, client, withdraw)
        say_withdrawn(withdrawn, _say)
        raise refused
    _tell(account, target)


NOT_WITHDRAWN = (
    "The access just granted was not withdrawn at the provider "
    f"({int(CommandCode.GRANT_NOT_WITHDRAWN)}): at some providers that would end the "
    "account's current access as well. Its refresh token is kept nowhere here."
)


def _refusal(account: AccountConfig, trial: SecretRef) -> MailFathomError | None:
    """None when the server takes the new grant for this account. When it refuses it, the
    grant is somebody else's: `MailServerAuthError` (31002) or `SubmissionCheckFailed`
    (72002), saying the old one is kept, to end with. Other failures are raised as a login
    raises them."""
    try:
        try_grant(account, trial)
    except ConsentRequired:
        raise
    except MailServerAuthError:
        return MailServerAuthError(_not_this_account(account, "mail server"))
    except SubmissionCheckFailed as failed:
        if failed.code != int(CheckCode.SUBMISSION_CREDENTIALS_REFUSED):
            raise
        return SubmissionCheckFailed(
            _not_this_account(account, "submission server"), code=failed.code
        )
    return None


def _not_this_account(account: AccountConfig, server: str) -> str:
    return (
        f"The {server} refused the login of account '{account.account_id}' with the new "
        "grant: access was perhaps granted as another user than the account's. The "
        "account's refresh token is as it was; run the command again and sign in as the "
        "account's own user."
    )


def _release(deployment: DeploymentConfig, account_id: str) -> None:
    """The new grant logs in: whatever held the account is over, in every process."""
    with Services.open(deployment) as services:
        assert services.grant_health is not None
        services.grant_health.granted_again(account_id)


def _tell(account: AccountConfig, target: Path) -> None:
    oauth = account.oauth
    assert oauth is not None
    if oauth.refresh_token.file is None:
        _say(
            f"The new refresh token logs in; it was written to {target} (readable by its "
            f"owner only). Put that file's content in {oauth.refresh_token.env} where the "
            "processes that run sync and serve get their environment, then delete the file; "
            "the account's health clears at its next login."
        )
        return
    _say(
        f"The new refresh token logs in and is in {target}; account '{account.account_id}' "
        "is no longer held back."
    )


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
