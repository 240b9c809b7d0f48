"""Access tokens for the accounts that log in with OAuth 2.0, one cache per process.

An access token is obtained from the account's refresh token (RFC 6749 section 6) when a
connection first needs one, kept, and replaced `RefreshMarginSeconds` before it expires, so
no connection opens with a token about to lapse. Every connection of an account (the folder
watchers of a pushed account, the change carrier, a delivery pass) shares it, and only one
refresh of an account is in flight at a time: the others wait for it and take its token.

A server that refuses a token it should have accepted (revoked early, or the clock of one
side off) is answered once: `after_refusal` refreshes, unless another connection already
replaced the refused token, and the caller logs in once more.

A refresh token the provider refuses (`invalid_grant`, or the client itself refused:
`invalid_client`, `unauthorized_client`, or `invalid_scope` where the grant no longer covers
what is asked; `interaction_required`, `consent_required` or `login_required`, where the
person must sign in or consent again) can be mended only by the person granting access
again. `ConsentRequired` is raised, and remembered for what was presented: the client id,
the client secret and the refresh token. Until one of them changes (a new grant, or a
mended client secret after `invalid_client`) the provider is not asked again, and a new
grant written to the file is taken at the next connection without a restart.

A provider may issue a new refresh token with any refresh (section 6); the new one replaces
the old in its File atomically (`replace_secret_file`: same owner, group and permissions,
through a symbolic link to the file it names). When the file will not take it, the new one is
used from memory and written again `WRITE_AGAIN_SECONDS` later by the next connection. Until
then a restarted process (or another one) would present the replaced token, which a provider
taking refresh tokens once refuses, so the operator is warned (`mfctl accounts`; the account
is not held): the `RefreshTokenSaving` a connection gives is told the token is unsaved at
each failed write, and saved once it is written, once the file is found holding another
token than the replaced one, or once a refresh with the file's own token succeeds with
nothing left to write. One
kept in an environment variable cannot be replaced: the new one is kept in memory for this
process and an event says so, without any value. Where the server takes a used refresh
token as stolen (Keycloak's "Revoke Refresh Token", Auth0 and Okta rotation), a second
process or this one after a restart presents the variable's used value and the whole grant
is revoked: the first refresh of a `generic` account whose token is in a variable warns of
it. It is not refused, since a server that does not rotate, or rotates without revoking,
works with a variable.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import structlog

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.oauth.endpoint import TokenEndpoint, TokenResponse
from mailfathom.domain.account_health import consent_message
from mailfathom.domain.config import AccountConfig, SecretRef
from mailfathom.domain.errors import ConsentRequired, TokenRefused
from mailfathom.domain.oauth import OAuthCredential, OAuthProvider

log = structlog.get_logger("mailfathom.oauth")

# Errors of RFC 6749 section 5.2 that only a new grant mends, and those of OpenID Connect
# Core section 3.1.2.6 that Microsoft answers a refresh with when the person must act
# (multi-factor authentication, a conditional access policy, a consent to give again).
CONSENT_ERRORS = frozenset(
    {
        "invalid_grant",
        "invalid_client",
        "unauthorized_client",
        "invalid_scope",
        "interaction_required",
        "consent_required",
        "login_required",
    }
)
# How long a token is taken to live when the server does not say (RFC 6749 section 5.1
# leaves `expires_in` optional); a refusal before then is answered by `after_refusal`.
ASSUMED_LIFETIME_SECONDS = 600.0
# A rotated refresh token its file would not take is written again this long after the last
# try, by the next connection that asks for an access token.
WRITE_AGAIN_SECONDS = 60.0


class RefreshTokenSaving(Protocol):
    """Where an account's connections say whether its refresh token file holds the token in
    use (`GrantHealth`). Both are idempotent, and said under the account's lock, in order."""

    def token_unsaved(self, account_id: str) -> None:
        """A rotated refresh token the file would not take is kept in memory."""
        ...

    def token_saved(self, account_id: str) -> None:
        """The file holds the refresh token in use."""
        ...


def _fingerprint(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _presented(client_id: str, client_secret: str | None, refresh_token: str) -> str:
    """The fingerprint of everything a refresh presents, so a refusal is remembered for
    exactly that: changing any of the three is worth asking again."""
    digest = hashlib.sha256()
    for part in (client_id, client_secret or "", refresh_token):
        encoded = part.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "big") + encoded)
    digest.update(b"\x01" if client_secret is not None else b"\x00")
    return digest.hexdigest()


@dataclass
class _AccountTokens:
    lock: threading.Lock = field(default_factory=threading.Lock)
    access_token: str | None = field(default=None, repr=False)
    renew_at: float = 0.0
    expires_at: float = 0.0
    # A rotated refresh token that could not be written back, with the fingerprint of the
    # secret's value it replaced: it is used while the secret still holds that value.
    kept_refresh: str | None = field(default=None, repr=False)
    kept_over: str | None = None
    write_again_at: float | None = None  # when to write `kept_refresh` to its file again
    # What to say next of the refresh token's file: False, a rotated token it would not take
    # is kept in memory; True, it holds the token in use; None, nothing new since last said.
    file_holds: bool | None = None
    refused: str | None = None  # `_presented` of the refresh the provider refused
    unreadable: bool = False  # the secret could not be read while waiting for consent
    refreshes: int = 0


class AccessTokens:
    """The access tokens of every OAuth account of this process; thread-safe."""

    def __init__(
        self,
        endpoint: TokenEndpoint | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        read: Callable[[SecretRef], str] = read_secret,
    ) -> None:
        self._endpoint_given = endpoint
        self._endpoint: TokenEndpoint | None = endpoint
        self._clock = clock
        self._read = read
        self._accounts: dict[str, _AccountTokens] = {}
        self._guard = threading.Lock()

    def _state(self, account_id: str) -> _AccountTokens:
        with self._guard:
            return self._accounts.setdefault(account_id, _AccountTokens())

    def _token_endpoint(self) -> TokenEndpoint:
        with self._guard:
            if self._endpoint is None:
                self._endpoint = TokenEndpoint()
            return self._endpoint

    def close(self) -> None:
        if self._endpoint is not None and self._endpoint_given is None:
            self._endpoint.close()

    def refreshes(self, account_id: str) -> int:
        """How many refreshes this process made for the account (an operator's figure)."""
        return self._state(account_id).refreshes

    def current(
        self,
        account_id: str,
        credential: OAuthCredential,
        saving: RefreshTokenSaving | None = None,
    ) -> str:
        """An access token for the account, refreshed first when none is held or it is within
        the margin of its expiry. Whether the refresh token file holds the token in use, when
        that changed, is said to `saving` (kept to be said to the next one given, if none).
        Raises `ConsentRequired` (31003) when the provider refused the refresh token now or
        before (and the secret still holds it), `SyncError` (31004, 31005) when no token
        could be obtained for another reason, `SecretUnavailable` when the refresh token or
        client secret cannot be read."""
        state = self._state(account_id)
        with state.lock:
            if state.write_again_at is not None and self._clock() >= state.write_again_at:
                self._write_again(account_id, state, credential.refresh_token)
            if state.access_token is not None and self._clock() < state.renew_at:
                token = state.access_token
            else:
                token = self._refresh(account_id, state, credential)
            _say_file(account_id, state, saving)
            return token

    def _write_again(self, account_id: str, state: _AccountTokens, ref: SecretRef) -> None:
        """Write the rotated refresh token kept in memory to its file, where the file still
        holds the value it replaced; under the account's lock."""
        state.write_again_at = None
        with refresh_lock(ref):
            kept, over = state.kept_refresh, state.kept_over
            try:
                stored = self._read(ref)
            except Exception as failure:  # the access token held is still good: try later
                self._write_later(account_id, state, ref, failure)
                return
            if kept is None or ref.file is None or over != _fingerprint(stored):
                # Another grant was written meanwhile (or this very token): it is the one to use.
                state.kept_refresh = state.kept_over = None
                state.file_holds = True
                return
            self._write_rotated(account_id, state, ref, ref.file, kept)

    def after_refusal(
        self,
        account_id: str,
        credential: OAuthCredential,
        refused: str,
        saving: RefreshTokenSaving | None = None,
    ) -> str:
        """A token to log in with once more after a server refused `refused`: the one another
        connection obtained meanwhile, or a new one. Says to `saving` and raises as `current`
        does."""
        state = self._state(account_id)
        with state.lock:
            held = state.access_token
            if held is not None and held != refused and self._clock() < state.expires_at:
                return held
            state.access_token = None
            token = self._refresh(account_id, state, credential)
            _say_file(account_id, state, saving)
            return token

    def consent_pending(self, account_id: str, credential: OAuthCredential) -> bool:
        """Whether the account's refresh token and client are still those the provider
        refused. Reads only the local secrets; one that cannot be read counts as still
        refused, and is said once (an event naming its key, never a path or a value)."""
        state = self._state(account_id)
        try:
            self._refresh_token(account_id, state, credential)
        except ConsentRequired:
            state.unreadable = False
            return True
        except Exception as failure:  # nothing new to try with until it reads
            if not state.unreadable:
                state.unreadable = True
                ref = credential.refresh_token
                log.warning(
                    "oauth.secret_unreadable",
                    account=account_id,
                    key=getattr(failure, "origin", None)
                    or f"{ref.origin}.{'File' if ref.file is not None else 'Env'}",
                    error=type(failure).__name__,
                )
            return True
        state.unreadable = False
        return False

    def _client_secret(self, credential: OAuthCredential) -> str | None:
        return None if credential.client_secret is None else self._read(credential.client_secret)

    def _refresh_token(
        self, account_id: str, state: _AccountTokens, credential: OAuthCredential
    ) -> str:
        stored = self._read(credential.refresh_token)
        if state.kept_refresh is not None:
            if state.kept_over == _fingerprint(stored):
                return state.kept_refresh
            # Another grant was written over the file: it is the one to use.
            state.kept_refresh = state.kept_over = None
            if credential.refresh_token.file is not None:
                state.file_holds = True
        self._unless_refused(account_id, state, credential, stored)
        return stored

    def _unless_refused(
        self,
        account_id: str,
        state: _AccountTokens,
        credential: OAuthCredential,
        refresh_token: str,
    ) -> str | None:
        """The client secret to present, after raising `ConsentRequired` where the provider
        refused this very client id, client secret and refresh token before."""
        secret = self._client_secret(credential)
        if state.refused is not None and state.refused == _presented(
            credential.client_id, secret, refresh_token
        ):
            raise _consent_required(account_id)
        return secret

    def _refresh(self, account_id: str, state: _AccountTokens, credential: OAuthCredential) -> str:
        ref = credential.refresh_token
        first = state.refreshes == 0
        if first and ref.env is not None and credential.provider is OAuthProvider.GENERIC:
            log.warning(
                "oauth.refresh_token_in_environment", account=account_id, key=f"{ref.origin}.Env"
            )
        # Other processes of the deployment (`serve` beside `sync`, a command) may refresh
        # with the same refresh token; where the provider rotates it, the second would be
        # refused. Holding the lock, each reads what the one before it wrote.
        with refresh_lock(credential.refresh_token):
            refresh_token = self._refresh_token(account_id, state, credential)
            return self._refresh_with(account_id, state, credential, refresh_token)

    def _refresh_with(
        self,
        account_id: str,
        state: _AccountTokens,
        credential: OAuthCredential,
        refresh_token: str,
    ) -> str:
        secret = self._unless_refused(account_id, state, credential, refresh_token)
        started = self._clock()
        state.refreshes += 1
        try:
            answer = self._token_endpoint().refresh(
                credential.token_endpoint,
                client_id=credential.client_id,
                client_secret=secret,
                refresh_token=refresh_token,
                scopes=credential.scopes,
            )
        except TokenRefused as refused:
            if refused.error not in CONSENT_ERRORS:
                raise
            state.refused = _presented(credential.client_id, secret, refresh_token)
            state.access_token = None
            log.error("oauth.consent_required", account=account_id, error=refused.error)
            raise _consent_required(account_id) from None
        state.refused = None
        self._keep(account_id, state, credential, refresh_token, answer, started)
        return answer.access_token

    def _keep(
        self,
        account_id: str,
        state: _AccountTokens,
        credential: OAuthCredential,
        used: str,
        answer: TokenResponse,
        started: float,
    ) -> None:
        lifetime = ASSUMED_LIFETIME_SECONDS if answer.expires_in is None else answer.expires_in
        # A margin longer than half the lifetime would have every connection refresh.
        margin = min(credential.refresh_margin_seconds, lifetime / 2)
        state.access_token = answer.access_token
        state.expires_at = started + lifetime
        state.renew_at = started + lifetime - margin
        if answer.refresh_token is not None and answer.refresh_token != used:
            self._rotate(account_id, state, credential.refresh_token, used, answer.refresh_token)
        elif credential.refresh_token.file is not None and state.kept_refresh is None:
            # The file's own token was taken, and nothing is left to write to it.
            state.file_holds = True

    def _rotate(
        self, account_id: str, state: _AccountTokens, ref: SecretRef, used: str, new: str
    ) -> None:
        """Put the rotated refresh token where the old one was read from."""
        stored = self._read(ref)
        ours = stored == used or state.kept_over == _fingerprint(stored)
        if ref.file is not None and not ours:
            # Someone wrote a new grant while this refresh ran: theirs is kept.
            return
        state.kept_refresh = new
        state.kept_over = _fingerprint(stored)
        if ref.file is not None:
            self._write_rotated(account_id, state, ref, ref.file, new)
            return
        log.warning(
            "oauth.refresh_token_kept_in_memory", account=account_id, key=f"{ref.origin}.Env"
        )

    def _write_rotated(
        self, account_id: str, state: _AccountTokens, ref: SecretRef, path: Path, new: str
    ) -> None:
        """Write `new` (kept in memory meanwhile) to the file; when the file will not take it,
        it stays kept and is written again `WRITE_AGAIN_SECONDS` later."""
        try:
            replace_secret_file(path, new)
        except OSError as failure:
            self._write_later(account_id, state, ref, failure)
            return
        state.kept_refresh = state.kept_over = None
        state.file_holds = True
        log.info("oauth.refresh_token_rotated", account=account_id)

    def _write_later(
        self, account_id: str, state: _AccountTokens, ref: SecretRef, failure: Exception
    ) -> None:
        """The kept token is written again `WRITE_AGAIN_SECONDS` from now; said each time."""
        state.write_again_at = self._clock() + WRITE_AGAIN_SECONDS
        state.file_holds = False
        log.error(
            "oauth.refresh_token_not_written",
            account=account_id,
            key=f"{ref.origin}.File",
            error=type(failure).__name__,
        )


def _say_file(account_id: str, state: _AccountTokens, saving: RefreshTokenSaving | None) -> None:
    """Say what changed of the refresh token's file, under the account's lock (so two
    connections say it in the order it happened); kept when there is nobody to say it to,
    or saying it failed."""
    if saving is None or state.file_holds is None:
        return
    if state.file_holds:
        saving.token_saved(account_id)
    else:
        saving.token_unsaved(account_id)
    state.file_holds = None


def _consent_required(account_id: str) -> ConsentRequired:
    return ConsentRequired(consent_message([account_id]))


@contextmanager
def refresh_lock(ref: SecretRef) -> Iterator[None]:
    """An exclusive lock, across processes, on the directory of a refresh token kept in a
    file (none for one kept in the environment, which no other process can replace). A
    directory that cannot be opened is not locked: refreshing still works, as before."""
    if ref.file is None:
        yield
        return
    try:
        handle = os.open(ref.file.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


class SecretFileOfAnotherUser(PermissionError):
    """The file belongs to another user, and this process cannot give a replacement that
    owner: writing it would leave that user unable to read their own secret."""


def replace_secret_file(path: Path, value: str) -> None:
    """Write `value` to `path` in one step (a file beside it, renamed over it): a reader sees
    the old secret or the new, never a part, and after a crash one or the other is on disk.

    The replacement is what the operator set up: the same owner and group (a command run by
    root for a service's user leaves the file that user's), the same permissions for owner
    and group, none for others (a new file: the owner's only). A symbolic link is followed
    and the file it names replaced, beside it: the link is the operator's way of keeping the
    secret elsewhere, and a regular file put in its place would split the secret in two.
    Raises `SecretFileOfAnotherUser` where the file is another user's and this process may
    not give files away."""
    target = Path(os.path.realpath(path))
    try:
        held: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        held = None
    effective = os.geteuid()
    if held is not None and held.st_uid != effective and effective != 0:
        raise SecretFileOfAnotherUser(errno.EACCES, "owned by another user")
    directory = target.parent
    handle, temporary = tempfile.mkstemp(prefix=".mailfathom-", dir=directory)
    try:
        if held is None:
            os.fchmod(handle, 0o600)
        else:
            if (held.st_uid, held.st_gid) != (effective, os.getegid()):
                os.fchown(handle, held.st_uid, held.st_gid)
            os.fchmod(handle, (stat.S_IMODE(held.st_mode) & 0o770) | 0o600)
        os.write(handle, value.encode("utf-8") + b"\n")
        os.fsync(handle)
        os.close(handle)
        handle = -1
        os.replace(temporary, target)
    except BaseException:
        if handle >= 0:
            os.close(handle)
        Path(temporary).unlink(missing_ok=True)
        raise
    _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    """Put a rename in `directory` on disk, so a crash cannot bring the old file back."""
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


_process_tokens: AccessTokens | None = None
_process_guard = threading.Lock()


def process_tokens() -> AccessTokens:
    """The access tokens of this process, shared by every connection it opens, so an
    account's token is refreshed once for all of them."""
    global _process_tokens
    with _process_guard:
        if _process_tokens is None:
            _process_tokens = AccessTokens()
        return _process_tokens


class ConsentOfAccounts:
    """Whether an account still waits for a new grant, for the synchronization runs."""

    def __init__(self, tokens: AccessTokens) -> None:
        self._tokens = tokens

    def consent_pending(self, account: AccountConfig) -> bool:
        if account.oauth is None:
            return False
        return self._tokens.consent_pending(account.account_id, account.oauth)
