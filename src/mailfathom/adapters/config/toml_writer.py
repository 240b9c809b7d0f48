"""Writing a new configuration file, in the form `load_config` reads.

The document is plain data: a table is a mapping, an array of tables a list of mappings, and
an `InlineTable` (a secret reference) is written on its key's line. Strings are written as
TOML basic strings; JSON's string escapes are a subset of those (TOML 1.0 section "String"),
so `json.dumps` quotes them.

A file is never replaced: the text is written to a private file beside the target, loaded
back with the loader every command uses, and only then linked into place, which fails when
something appeared there in the meantime.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.errors import ConfigurationFileExists

Scalar = str | int | float | bool


class InlineTable(dict[str, Scalar]):
    """A small table written inline: `Secret = { Env = "NAME" }`."""


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, InlineTable):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _is_table(value: object) -> bool:
    return isinstance(value, Mapping) and not isinstance(value, InlineTable)


def _is_table_array(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_table(v) for v in value)


def _table(lines: list[str], path: str, table: Mapping[str, object], header: str | None) -> None:
    if header is not None:
        lines += ["", header]
    nested: list[tuple[str, object]] = []
    for key, value in table.items():
        if _is_table(value) or _is_table_array(value):
            nested.append((key, value))
        else:
            lines.append(f"{key} = {_value(value)}")
    for key, value in nested:
        name = f"{path}.{key}" if path else key
        if isinstance(value, Mapping):
            _table(lines, name, value, f"[{name}]")
        else:
            assert isinstance(value, Sequence)
            for entry in value:
                _table(lines, name, entry, f"[[{name}]]")


def render_toml(document: Mapping[str, object], comment: str = "") -> str:
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    _table(lines, "", document, None)
    return "\n".join(lines).lstrip("\n") + "\n"


def refuse_existing(path: Path) -> None:
    if os.path.lexists(path):
        raise ConfigurationFileExists(
            "A file is already at the path the configuration would be written to; it is "
            "left as it is. Name another path with --config, or move the file away."
        )


def create_config_file(
    path: Path, document: Mapping[str, object], comment: str = ""
) -> DeploymentConfig:
    """Write `document` to `path`, which must not exist, and return it as loaded. Raises
    `ConfigurationFileExists` (11004), or `ConfigurationProblems` if the document breaks a
    rule (then nothing is left behind)."""
    refuse_existing(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{secrets.token_hex(6)}.new")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_toml(document, comment))
        config = load_config(draft)
        try:
            os.link(draft, path)
        except FileExistsError:
            refuse_existing(path)
            raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()
    return config
