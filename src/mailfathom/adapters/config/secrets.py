"""Reading a secret at the moment a connection needs it, and checking at start that it can be.

The configuration only records where a secret lives (`SecretRef`); nothing reads it at load
time. A command that will need secrets reads each of them once before it starts anything
(`require_secrets`), so an unset variable or a missing file stops it at once, naming the
account, the configuration key and the variable; a connection reads the secret again when
it is made, so a rotated secret is picked up without a restart.

Failures name the configuration key the reference came from, the environment variable (its
name was checked to be a variable name when the file was loaded) and the rule broken. Neither
the secret nor the file path is repeated: a path can be anything an operator typed there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mailfathom.domain.config import AccountConfig, AccountKind, DeploymentConfig, SecretRef
from mailfathom.domain.errors import ConfigurationError, SecretUnavailable
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.oauth import ConnectionAuth

# A secret file larger than this is certainly not a password; refusing it also keeps a
# misdirected reference (a device, a large log) from being read into memory.
MAX_SECRET_FILE_OCTETS = 64 * 1024


def read_secret(ref: SecretRef, environ: Mapping[str, str] | None = None) -> str:
    """Return the secret `ref` points at.

    An environment variable is read from `environ` (the process environment when None). A file
    is read as UTF-8 with one trailing line break removed, so files written by `echo` or by
    container secret mounts work as expected. An unset or empty variable, an unreadable,
    oversized or empty file raises `SecretUnavailable`; a reference naming neither or both
    sources raises `ConfigurationError`.
    """
    where = ref.origin or "a secret reference"
    if (ref.env is None) == (ref.file is None):
        raise ConfigurationError(f"{where}: exactly one of Env or File must be given")
    if ref.env is not None:
        source = os.environ if environ is None else environ
        value = source.get(ref.env)
        if not value:
            raise SecretUnavailable(
                f"{where}.Env: the environment variable {ref.env} is unset or empty",
                origin=f"{where}.Env",
            )
        return value
    assert ref.file is not None
    return _read_secret_file(ref.file, where)


def _read_secret_file(path: os.PathLike[str], where: str) -> str:
    key = f"{where}.File"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SECRET_FILE_OCTETS + 1)
    except OSError:
        raise SecretUnavailable(
            f"{key}: the file it names cannot be read (missing, not a file, or not permitted)",
            origin=key,
        ) from None
    if len(raw) > MAX_SECRET_FILE_OCTETS:
        raise SecretUnavailable(
            f"{key}: the file it names is larger than {MAX_SECRET_FILE_OCTETS} bytes",
            origin=key,
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # `from None`: the decode error's text quotes bytes of the secret.
        raise SecretUnavailable(
            f"{key}: the file it names is not valid UTF-8 text", origin=key
        ) from None
    if text.endswith("\r\n"):
        text = text[:-2]
    elif text.endswith("\n"):
        text = text[:-1]
    if not text:
        raise SecretUnavailable(f"{key}: the file it names is empty", origin=key)
    return text


@dataclass(frozen=True, slots=True)
class NeededSecret:
    """A secret some account needs for the work a command is about to start."""

    account_id: str
    ref: SecretRef


def _login_secrets(
    account: AccountConfig, auth: ConnectionAuth, password: SecretRef | None
) -> list[NeededSecret]:
    """What one connection of `account` logs in with: its password, or, with OAuth, the
    refresh token (and client secret) access tokens are obtained with."""
    if auth is ConnectionAuth.OAUTH2:
        oauth = account.oauth
        if oauth is None:
            return []
        refs = [oauth.refresh_token]
        if oauth.client_secret is not None:
            refs.append(oauth.client_secret)
        return [NeededSecret(account.account_id, ref) for ref in refs]
    return [] if password is None else [NeededSecret(account.account_id, password)]


def secrets_to_synchronize(accounts: Iterable[AccountConfig]) -> list[NeededSecret]:
    """What the accounts to synchronize log in to their IMAP servers with (local accounts
    need nothing)."""
    return [
        needed
        for a in accounts
        if a.kind is AccountKind.IMAP and a.imap is not None
        for needed in _login_secrets(a, a.imap.auth, a.imap.secret)
    ]


def secrets_to_deliver(config: DeploymentConfig) -> list[NeededSecret]:
    """What a delivery pass logs in with: each sending account's submission server, and the
    IMAP server of a sending account that keeps its Sent copies there."""
    if config.read_only:
        return []
    needed: list[NeededSecret] = []
    for account in config.accounts:
        delivery = account.delivery
        if delivery is None or not delivery.enabled:
            continue
        if delivery.smtp is not None:
            smtp = delivery.smtp
            needed += _login_secrets(account, smtp.auth, smtp.secret)
        keeps_sent = any(f.role is FolderRole.SENT for f in account.folders)
        if account.kind is AccountKind.IMAP and account.imap is not None and keeps_sent:
            needed += _login_secrets(account, account.imap.auth, account.imap.secret)
    return needed


def require_secrets(
    needed: Sequence[NeededSecret], environ: Mapping[str, str] | None = None
) -> None:
    """Read every secret in `needed` once; raise `SecretUnavailable` naming each account and
    reference that cannot be read (all of them, so one start shows every problem)."""
    problems: list[str] = []
    origins: list[str] = []
    seen: set[tuple[str, SecretRef]] = set()
    for item in needed:
        if (item.account_id, item.ref) in seen:
            continue
        seen.add((item.account_id, item.ref))
        try:
            read_secret(item.ref, environ)
        except SecretUnavailable as failure:
            problems.append(f"account '{item.account_id}': {failure.message}")
            origins.append(failure.origin)
    if problems:
        raise SecretUnavailable(
            "a secret this command needs cannot be read, so nothing was started: "
            + "; ".join(problems),
            origin=", ".join(origins),
        )


class LoginSecretsOfAccounts:
    """What an account's IMAP login reads, as a digest, for a run waiting for an operator
    to replace credentials the server refused."""

    def fingerprint(self, account: AccountConfig) -> str:
        digest = hashlib.sha256()
        for needed in secrets_to_synchronize([account]):
            value = read_secret(needed.ref).encode("utf-8")
            digest.update(len(value).to_bytes(8, "big") + value)
        return digest.hexdigest()
