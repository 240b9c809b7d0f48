"""The `[Console]` section: whether `mailfathom serve` serves the owner's console, the
address it listens on (loopback unless the operator writes another), and the name and
origins its passkeys are made for."""

from __future__ import annotations

from urllib.parse import urlsplit

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import parse_listen
from mailfathom.domain.console import (
    DEFAULT_CONSOLE_PORT,
    ConsoleConfig,
    canonical_origin,
    public_origin_problem,
)
from mailfathom.domain.passkeys import DEFAULT_PASSKEY_NAME, name_problem, origin_problem

_KEYS = frozenset({"Enabled", "Listen", "PasskeyName", "PasskeyOrigins", "PublicOrigin"})


def parse_console(table: Table | None) -> ConsoleConfig:
    if table is None:
        return ConsoleConfig()
    table.refuse_unknown(_KEYS)
    host, port = parse_listen(table, DEFAULT_CONSOLE_PORT)
    public = _public_origin(table)
    written_name = table.string("PasskeyName")
    public_name = urlsplit(public).hostname if public is not None else None
    name = written_name or public_name or DEFAULT_PASSKEY_NAME
    problem = name_problem(name)
    if problem is not None:
        table.problems.add(table.at("PasskeyName"), problem)
        name = DEFAULT_PASSKEY_NAME
    elif written_name and public is not None:
        problem = origin_problem(public, name)
        if problem is not None:
            table.problems.add(table.at("PublicOrigin"), problem)
    origins = table.strings("PasskeyOrigins") or []
    for index, origin in enumerate(origins):
        problem = origin_problem(origin, name)
        if problem is not None:
            table.problems.add(f"{table.at('PasskeyOrigins')}[{index}]", problem)
    return ConsoleConfig(
        enabled=table.boolean("Enabled", False),
        host=host,
        port=port,
        passkey_name=name,
        passkey_origins=tuple(origins),
        public_origin=public,
    )


def _public_origin(table: Table) -> str | None:
    """`PublicOrigin` as a browser writes it, or None when unset or unusable (reported)."""
    written = table.string("PublicOrigin")
    if written is None:
        return None
    problem = public_origin_problem(written)
    if problem is not None:
        table.problems.add(table.at("PublicOrigin"), problem)
        return None
    return canonical_origin(written)
