"""Reading a secret at the moment a connection needs it.

The configuration only records where a secret lives (`SecretRef`); nothing reads it at load
time. A connection reads the secret when it is made, so a rotated secret is picked up without
a restart.

Failures name the configuration key the reference came from, the environment variable (its
name was checked to be a variable name when the file was loaded) and the rule broken. Neither
the secret nor the file path is repeated: a path can be anything an operator typed there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import ConfigurationError, SecretUnavailable

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
