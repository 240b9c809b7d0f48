"""The OAuth part of `mailfathom init --provider`: finding the endpoints, asking the person
for access, keeping the refresh token, and what the configuration says about it.

Everything that could refuse is checked before the person is asked: the answers, a generic
server's metadata, that the provider offers the flow, that the refresh token's file can be
created. Once granted, the token is written (owner only, never replacing a file) before the
servers are checked with it, since the check already refreshes through that file; if a
check fails or the operator interrupts, the caller removes it again, with the directories
made for it (`GrantedAccess.discard`), so a failed init leaves nothing behind.

With `--refresh-token-env` the configuration reads the token from that variable, but init
cannot set a variable in the service's environment and never prints the token: it writes
the file all the same and says where, for the operator to move it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from mailfathom.bootstrap import (
    InlineTable,
    OAuthClient,
    check_secret_place,
    create_secret_file,
    discover,
    held_refresh_token,
    read_secret,
    revoke_refresh_token,
)
from mailfathom.domain.config import SecretRef
from mailfathom.domain.oauth import OAuthCredential, OAuthProvider
from mailfathom.entrypoints.cli.granting import (
    Endpoints,
    GrantPlan,
    Say,
    choose_flow,
    default_refresh_token_file,
    obtain_grant,
)
from mailfathom.entrypoints.cli.init_answers import Answers
from mailfathom.entrypoints.cli.init_oauth_answers import OAuthAnswers, preset_of
from mailfathom.entrypoints.cli.interrupts import held

ORIGIN = "Accounts[0].OAuth"


@dataclass(slots=True)
class GrantedAccess:
    """A grant to be kept in `token_file`; `credential` reads it from there for the checks,
    and `block` is the account's `OAuth` table as the configuration will say it."""

    credential: OAuthCredential
    token_file: Path
    block: dict[str, object]
    client: OAuthClient
    refresh_token: str = field(repr=False)
    # The directories writing the file made, deepest first, and whether it was written.
    made: tuple[Path, ...] = ()
    kept: bool = False

    def keep(self) -> None:
        """Write the refresh token to its file (owner only). A Ctrl-C meanwhile takes
        effect once the file is written and known to be, so `discard` finds it."""
        self.made = tuple(_missing_directories(self.token_file.parent))
        with held():
            create_secret_file(self.token_file, self.refresh_token)
            self.kept = True

    def discard(self, say: Say) -> None:
        """Remove what `keep` wrote (the file, and the directories it made that nothing else
        was put in since), then withdraw the grant at the provider. Removing comes first, so
        a Ctrl-C while the provider is slow to answer cannot leave a working token on disk;
        one during the removal takes effect after it. The token withdrawn is the one the file
        held: the checks refreshed through it, and the provider may have rotated it."""
        current = self.refresh_token
        if self.kept:
            with held():
                current = held_refresh_token(self.token_file, self.refresh_token)
                self._remove()
        say_withdrawn(
            revoke_refresh_token(self.credential.revocation_endpoint, self.client, current),
            say,
        )

    def _remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.token_file.unlink()
        self.kept = False
        for directory in self.made:
            try:
                directory.rmdir()
            except OSError:
                return


def say_withdrawn(withdrawn: bool, say: Say) -> None:
    """Tell whether a grant thrown away was withdrawn at the provider."""
    if withdrawn:
        say("The access just granted was withdrawn at the provider.")
    else:
        say(
            "The access just granted could not be withdrawn at the provider (it offers no "
            "revocation endpoint, or did not answer); it can be removed in the account's "
            "security settings there."
        )


def _missing_directories(directory: Path) -> list[Path]:
    missing = []
    while not directory.exists() and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    return missing


def secret_table(ref: SecretRef) -> InlineTable:
    if ref.env is not None:
        return InlineTable(Env=ref.env)
    return InlineTable(File=str(ref.file))


def _credential(
    oauth: OAuthAnswers, plan: GrantPlan, revocation: str | None, token_file: Path
) -> OAuthCredential:
    return OAuthCredential(
        provider=oauth.provider,
        client_id=oauth.client_id,
        refresh_token=SecretRef(file=token_file, origin=f"{ORIGIN}.RefreshToken"),
        token_endpoint=plan.token_endpoint,
        scopes=plan.client.scopes,
        client_secret=oauth.client_secret,
        device_authorization_endpoint=plan.device_authorization_endpoint,
        authorization_endpoint=plan.authorization_endpoint,
        revocation_endpoint=revocation,
    )


def _block(oauth: OAuthAnswers, credential: OAuthCredential, token_file: Path) -> dict[str, object]:
    """What the configuration says: a named provider's endpoints and scopes are its preset's
    and are left out, a generic server's are written as they were found."""
    block: dict[str, object] = {"Provider": oauth.provider.value, "ClientId": oauth.client_id}
    if oauth.client_secret is not None:
        block["ClientSecret"] = secret_table(oauth.client_secret)
    where = (
        SecretRef(env=oauth.refresh_token_env)
        if oauth.refresh_token_env is not None
        else SecretRef(file=token_file)
    )
    block["RefreshToken"] = secret_table(where)
    if oauth.tenant is not None:
        block["Tenant"] = oauth.tenant
    if oauth.provider is OAuthProvider.GENERIC:
        block["TokenEndpoint"] = credential.token_endpoint
        block["Scopes"] = list(credential.scopes)
        for key, value in (
            ("DeviceAuthorizationEndpoint", credential.device_authorization_endpoint),
            ("AuthorizationEndpoint", credential.authorization_endpoint),
            ("RevocationEndpoint", credential.revocation_endpoint),
        ):
            if value is not None:
                block[key] = value
    return block


def _plan(oauth: OAuthAnswers, say: Say, user: str) -> tuple[GrantPlan, str | None]:
    """The grant's client and endpoints, and the revocation endpoint to write down."""
    secret = None if oauth.client_secret is None else read_secret(oauth.client_secret)
    found: Endpoints
    if oauth.provider is OAuthProvider.GENERIC:
        assert oauth.issuer is not None
        say(f"Reading the authorization server's metadata at {oauth.issuer} ...")
        found, scopes = discover(oauth.issuer), oauth.scopes
    else:
        preset = preset_of(oauth.provider, oauth.tenant)
        assert preset is not None
        found, scopes = preset, preset.scopes
    client = OAuthClient(oauth.client_id, scopes, secret)
    plan = GrantPlan.at(oauth.provider, client, found, login_hint=user)
    return plan, found.revocation_endpoint


def grant_access(
    config_path: Path, answers: Answers, say: Say, *, interactive: bool
) -> GrantedAccess:
    """Ask the person for access; the refresh token is written by `GrantedAccess.keep`.
    Raises `GrantFailed`, or `ConfigurationError` (11004, 11019) before anything is asked."""
    oauth = answers.oauth
    assert oauth is not None
    plan, revocation = _plan(oauth, say, answers.imap.username)
    flow = choose_flow(plan, oauth.flow)
    token_file = oauth.refresh_token_file or default_refresh_token_file(
        config_path.parent / answers.data_dir, answers.account_id
    )
    check_secret_place(token_file, new=True)
    grant = obtain_grant(plan, flow, say, interactive=interactive)
    credential = _credential(oauth, plan, revocation, token_file)
    block = _block(oauth, credential, token_file)
    return GrantedAccess(credential, token_file, block, plan.client, grant.refresh_token)


def say_where_the_token_is(access: GrantedAccess, oauth: OAuthAnswers, say: Say) -> None:
    if oauth.refresh_token_env is None:
        say(
            f"The refresh token is in {access.token_file} (readable by its owner only); it "
            "is never shown."
        )
        return
    name = oauth.refresh_token_env
    say(
        f"The configuration reads the refresh token from ${name}. init cannot set it for "
        f"the processes that will run sync and serve, so the token was written to "
        f"{access.token_file} (readable by its owner only): put that file's content in "
        f"{name} where those processes get their environment, then delete the file. See "
        "docs/oauth-providers.md."
    )
