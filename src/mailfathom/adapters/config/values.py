"""Value checks more than one section shares: names, paths, enumerations, secret references."""

from __future__ import annotations

import enum
import os
import re
from pathlib import Path
from typing import TypeVar

from mailfathom.adapters.config.toml_tables import REFERENCE_HINT, Problems, Table
from mailfathom.domain import text_rules
from mailfathom.domain.config import SecretRef

E = TypeVar("E", bound=enum.Enum)

SECURE_ADDRESS_RULE = (
    "must be an absolute https:// address with a host and no user, query or fragment "
    "(http:// only on a loopback host)"
)
NAME_LIMIT = 256
HOST_LIMIT = 253
_SECRET_KEYS = frozenset({"Env", "File"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_name(problems: Problems, path: str, name: str, *, what: str = "") -> bool:
    """A human-facing name: 1–256 characters, no control characters, no outer whitespace."""
    prefix = f"{what} " if what else ""
    if not 1 <= len(name) <= NAME_LIMIT:
        problems.add(path, f"{prefix}must be 1 to {NAME_LIMIT} characters long")
        return False
    if not text_rules.is_name(name):
        problems.add(path, f"{prefix}must not contain control characters")
        return False
    if name != name.strip():
        problems.add(path, f"{prefix}must not begin or end with whitespace")
        return False
    return True


def valid_name(name: str) -> bool:
    return check_name(Problems(), "", name)


def is_host(text: str) -> bool:
    """A host name or address as a server connection takes it: 1 to 253 characters, no
    spaces or control characters."""
    return (
        0 < len(text) <= HOST_LIMIT
        and not any(char.isspace() for char in text)
        and text_rules.is_name(text)
    )


def config_path(problems: Problems, path: str, text: str, base_dir: Path) -> Path | None:
    if not text:
        problems.add(path, "must not be empty")
        return None
    if not text_rules.is_name(text):
        problems.add(path, "must not contain control characters")
        return None
    expanded = expand_home(text)
    if expanded is None:
        problems.add(path, HOME_UNKNOWN)
        return None
    candidate = Path(expanded)
    return candidate if candidate.is_absolute() else base_dir / candidate


HOME_UNKNOWN = (
    "starts with ~ or ~user, but that home directory is not known (HOME is unset or the user "
    "does not exist); write an absolute path or one relative to the configuration file"
)


def expand_home(text: str) -> str | None:
    """`text` with a leading `~` or `~user` replaced by that home directory; None when the
    home directory is not known. Any other text is returned as it is."""
    if not text.startswith("~"):
        return text
    expanded = os.path.expanduser(text)
    return None if expanded.startswith("~") else expanded


def parse_enum(table: Table, key: str, enum_type: type[E], *, required: bool = False) -> E | None:
    text = table.string(key, required=required)
    if text is None:
        return None
    for member in enum_type:
        if member.value == text.lower():
            return member
    choices = " | ".join(member.value for member in enum_type)
    table.problems.add(table.at(key), f"must be one of {choices}")
    return None


def parse_secret(owner: Table, key: str, base_dir: Path) -> SecretRef | None:
    problems = owner.problems
    path = owner.at(key)
    value = owner.data[key]
    if isinstance(value, str):
        problems.add(path, f"a secret is not accepted in the file; {REFERENCE_HINT}")
        return None
    table = owner.table(key)
    if table is None:
        return None
    table.refuse_unknown(_SECRET_KEYS)
    env = table.string("Env")
    file_text = table.string("File")
    given = [name for name in ("Env", "File") if table.has(name)]
    if len(given) != 1:
        problems.add(path, "exactly one of Env or File must be given")
        return None
    if table.has("Env"):
        if env is None:
            return None
        if not _ENV_NAME.fullmatch(env):
            problems.add(
                table.at("Env"),
                "must be an environment variable name (letters, digits and underscores, "
                "not starting with a digit)",
            )
            return None
        return SecretRef(env=env, origin=path)
    if file_text is None:
        return None
    file_path = config_path(problems, table.at("File"), file_text, base_dir)
    if file_path is None:
        return None
    return SecretRef(file=file_path, origin=path)


def bounded_integer(
    table: Table, key: str, default: int, least: int, most: int, *, unit: str = ""
) -> int:
    """An integer from `least` to `most`; anything else is a problem, and `default` stands."""
    value = table.integer(key)
    if value is None:
        return default
    if not least <= value <= most:
        table.problems.add(table.at(key), f"must be from {least} to {most}{unit}")
        return default
    return value


def bounded_number(
    table: Table, key: str, default: float, least: float, most: float, *, unit: str = ""
) -> float:
    """A number from `least` to `most`; anything else is a problem, and `default` stands."""
    value = table.number(key)
    if value is None:
        return default
    if not least <= value <= most:
        table.problems.add(table.at(key), f"must be from {least:g} to {most:g}{unit}")
        return default
    return value


def parse_listen(table: Table, default_port: int) -> tuple[str, int]:
    """A section's `Listen` as host and port; loopback on `default_port` when absent or
    broken (the problem is reported)."""
    text = table.string("Listen")
    if text is None:
        return "127.0.0.1", default_port
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        table.problems.add(table.at("Listen"), 'must be "host:port" with a port from 1 to 65535')
        return "127.0.0.1", default_port
    return host, int(port_text)
