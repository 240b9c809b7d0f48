"""The error-code registry.

Every failure that reaches a caller or an operator carries a stable five-digit code. The first
digit is the category; only the boundary category (5xxxx) is ever shown to a tool caller as it
stands, everything else collapses to 54001 there. Messages name a field, a rule or a limit and
never a value taken from mail or from a request.
"""

from __future__ import annotations

import enum

from mailfathom.domain.codes import CheckCode, CommandCode


class Category(enum.IntEnum):
    CONFIGURATION = 1
    STORE = 2
    SYNCHRONIZATION = 3
    CONTENT = 4
    BOUNDARY = 5
    AUTHORIZATION = 6
    DELIVERY = 7


class MailFathomError(Exception):
    """Base of every failure the project raises on purpose."""

    code: int = 54001

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    @property
    def category(self) -> Category:
        return Category(self.code // 10000)

    def __str__(self) -> str:
        return f"MailFathom error {self.code}: {self.message}"


class ConfigurationError(MailFathomError):
    """The configuration breaks a rule; the message names the key and the rule."""

    code = 11001


class SecretUnavailable(ConfigurationError):
    """A secret the configuration refers to cannot be read: an unset or empty environment
    variable, or a missing, unreadable, empty or oversized file. `origin` is the configuration
    key of the reference."""

    code = 11002

    def __init__(self, message: str, *, origin: str) -> None:
        super().__init__(message)
        self.origin = origin


class ImportSourceRefused(ConfigurationError):
    """The source of an import does not exist or is not mail; the message names the shapes
    an import reads, never the path or anything a file holds."""

    code = int(CommandCode.IMPORT_SOURCE_NOT_MAIL)


class ConfigurationFileExists(ConfigurationError):
    """A command that writes a new configuration found a file where it would write it."""

    code = int(CommandCode.CONFIGURATION_FILE_EXISTS)


class EmbeddingModelUnusable(ConfigurationError):
    """The active embedding profile's packaged model cannot be used, so nothing starts: its
    weights are not the ones the configuration names (11024), its package or a file of it is
    missing (11025), or the model does not load (11026). The message names the profile and
    the package, never a path or a checksum found."""

    code = int(CommandCode.EMBEDDING_MODEL_NOT_LOADED)


class SubmissionCheckFailed(MailFathomError):
    """A submission server could not be reached, or did not accept the credentials, when
    it was checked before being written into a configuration."""

    code = int(CheckCode.SUBMISSION_UNREACHABLE)


class GrantFailed(MailFathomError):
    """Access to a mail account could not be granted with OAuth: the person declined or did
    not answer in time, or the authorization server could not be used. The code says which
    (`CommandCode.GRANT_*`, `CheckCode.AUTHORIZATION_*`); the message never carries a token,
    a code the person typed, or what the server wrote beside its error's name."""

    code = int(CheckCode.AUTHORIZATION_SERVER_UNREACHABLE)


class StoreError(MailFathomError):
    code = 21001


class SyncError(MailFathomError):
    """A synchronization step failed for a reason worth retrying later."""

    code = 31001


class MailServerAuthError(SyncError):
    code = 31002


class ConsentRequired(MailServerAuthError):
    """The provider refused the refresh token an account logs in with (revoked, expired, or
    the grant withdrawn): only the person can grant access again, so nothing retries it."""

    code = 31003


class LeaseLost(MailFathomError):
    """This worker no longer holds the lease of the work it was doing (another worker claimed
    it after it expired, or it was given up): the write that found out was not made, and the
    work stops. Not a failure of the account: nothing is recorded against it."""

    code = 31007


class PassStopped(LeaseLost):
    """A pass was told to stop (its lease given up, or its worker stopping) and ended at a
    batch boundary, the batches already fetched committed. Handled as a lease lost: the run
    ends and nothing is recorded against the account."""


class LeaseHeld(MailFathomError):
    """Work done once (a pass run by hand) needs a lease another worker holds: two carriers
    of an account's owner changes at once could each send the same command. Nothing was done;
    run it again once that worker stopped, or let the worker do the work."""

    code = 31008


class TokenEndpointUnreachable(SyncError):
    """An OAuth token endpoint could not be reached, or answered with something that is not a
    token response (a server error, a page, a body too large): asking again later may work."""

    code = 31004


class TokenRefused(SyncError):
    """An OAuth token endpoint refused a request with an RFC 6749 section 5.2 error (or an
    RFC 8628 section 3.5 one while a device grant is pending). `error` is the error's name
    as the protocol defines it (`invalid_grant`, `authorization_pending`, ...), or
    `unrecognized` when the server sent a name outside the protocol's character set."""

    code = 31005

    def __init__(self, error: str, message: str | None = None) -> None:
        super().__init__(message or f"The token endpoint refused the request ({error}).")
        self.error = error


class ContentMissingError(MailFathomError):
    """The stored content of a message is missing or damaged; a repair was requested."""

    code = 55001


class Refusal(MailFathomError):
    """A request the use case will not serve, with a code from `codes.Code` and a sentence
    written for the caller: it names the argument and the rule, never the value."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message, code=int(code))


class PermissionDenied(MailFathomError):
    """A use case was reached by a caller whose grant does not name its permission. The
    entrypoint normally refuses first; this is the second, independent check."""

    code = 61001


class ChatProviderFailed(MailFathomError):
    """The chat provider failed a question. `code` is the failure's own (`AnsweringCode`,
    category 1), so the boundary tells the caller 54001 and logs this code for the
    operator; the message never carries what the provider answered."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message, code=code)
