"""Where a granted refresh token is written: a file readable and writable by its owner only.

`init` creates the file and never replaces one (someone else's secret may be there), and it
checks that before asking the person anything, so a grant is never obtained only to be
dropped. `account consent` replaces the account's file in one step
(`tokens.replace_secret_file`), so a process reading it sees the old grant or the new, and
the file keeps its owner, group and permissions; a file of another user is left alone
(11021), checked before the person is asked as well. Every directory made on the way is the
owner's only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

from mailfathom.adapters.config.secrets import read_secret
from mailfathom.adapters.oauth.tokens import (
    SecretFileOfAnotherUser,
    refresh_lock,
    replace_secret_file,
)
from mailfathom.domain.codes import CommandCode
from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import (
    ConfigurationError,
    ConfigurationFileExists,
    SecretUnavailable,
)


def _not_writable() -> ConfigurationError:
    return ConfigurationError(
        "The refresh token's file cannot be written there: its directory cannot be created "
        "or written. Name another place with --refresh-token-file.",
        code=int(CommandCode.REFRESH_TOKEN_NOT_WRITABLE),
    )


def _of_another_user() -> ConfigurationError:
    return ConfigurationError(
        "The refresh token's file belongs to another user, and a replacement written by "
        "this user would not be theirs; it is left as it is. Run the command as its owner "
        "(or as root, which keeps the owner).",
        code=int(CommandCode.REFRESH_TOKEN_FILE_OF_ANOTHER_USER),
    )


def check_secret_place(path: Path, *, new: bool) -> None:
    """Raise before a grant is asked for when `path` could not take it: 11004 when `new`
    and a file is already there, 11021 when the file there (through a link) is another
    user's and this process is not root, 11019 when the nearest existing directory above
    it is not one this process may write in."""
    if new and os.path.lexists(path):
        raise ConfigurationFileExists(
            "A file is already where the refresh token would be written; it is left as it "
            "is. Name another place with --refresh-token-file, or move the file away."
        )
    if not new:
        path = Path(os.path.realpath(path))
        with contextlib.suppress(OSError):
            owner = path.stat().st_uid
            if owner != os.geteuid() and os.geteuid() != 0:
                raise _of_another_user()
    directory = path.parent
    while not directory.exists():
        if directory.parent == directory:
            raise _not_writable()
        directory = directory.parent
    if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
        raise _not_writable()


def _make_directory(directory: Path) -> None:
    """Make `directory` and each missing one above it with mode 0700 (`mkdir(parents=True)`
    would give those above the umask's mode)."""
    missing: list[Path] = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    try:
        for made in reversed(missing):
            made.mkdir(mode=0o700, exist_ok=True)
            made.chmod(0o700)
    except OSError:
        raise _not_writable() from None


def create_secret_file(path: Path, value: str) -> None:
    """Write `value` to a new file at `path` (mode 0600); a file that appeared there in the
    meantime is left as it is (11004)."""
    _make_directory(path.parent)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(6)}.new")
    try:
        handle = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        raise _not_writable() from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(value + "\n")
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(draft, path)
        except FileExistsError:
            check_secret_place(path, new=True)
            raise
        except OSError:
            raise _not_writable() from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()


@contextlib.contextmanager
def trial_secret_file(beside: Path, value: str) -> Iterator[Path]:
    """A new file (mode 0600) holding `value` in the directory of `beside`, removed at the
    end of the block: where a new grant is kept while it is tried. Read it again before
    keeping the grant, since a refresh during the trial may have rotated it."""
    trial = beside.with_name(f".{beside.name}.{secrets.token_hex(6)}.trial")
    create_secret_file(trial, value)
    try:
        yield trial
    finally:
        with contextlib.suppress(FileNotFoundError):
            trial.unlink()


def held_refresh_token(path: Path, granted: str) -> str:
    """The refresh token the file at `path` holds now, which a refresh since it was written
    with `granted` may have rotated: the one to withdraw, since withdrawing a token rotated
    out ends nothing. `granted` where the file cannot be read (removed, or never written)."""
    try:
        return read_secret(SecretRef(file=path))
    except SecretUnavailable:
        return granted


def write_over_secret_file(path: Path, value: str) -> None:
    """Put `value` at `path` in one step, replacing what is there (as `replace_secret_file`
    does: owner, group and permissions kept, a link followed; 11021 for a file of another
    user, 11019 when it cannot be written), under the
    lock refreshes of the same file take, so a process refreshing meanwhile reads the old
    grant or the new and never writes a rotated old one over the new."""
    _make_directory(path.parent)
    try:
        with refresh_lock(SecretRef(file=path)):
            replace_secret_file(path, value)
    except SecretFileOfAnotherUser:
        raise _of_another_user() from None
    except OSError:
        raise _not_writable() from None
