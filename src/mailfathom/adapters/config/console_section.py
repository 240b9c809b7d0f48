"""The `[Console]` section: whether `mailfathom serve` serves the owner's console, and the
address it listens on (loopback unless the operator writes another)."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import parse_listen
from mailfathom.domain.console import DEFAULT_CONSOLE_PORT, ConsoleConfig

_KEYS = frozenset({"Enabled", "Listen"})


def parse_console(table: Table | None) -> ConsoleConfig:
    if table is None:
        return ConsoleConfig()
    table.refuse_unknown(_KEYS)
    host, port = parse_listen(table, DEFAULT_CONSOLE_PORT)
    return ConsoleConfig(enabled=table.boolean("Enabled", False), host=host, port=port)
