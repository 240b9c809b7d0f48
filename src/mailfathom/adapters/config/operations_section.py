"""The `[Operations]` section: the address of the listener a process serves `/livez`,
`/readyz` and `/metrics` on for its supervisor and scraper (none when absent)."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import parse_listen
from mailfathom.domain.operations import OperationsConfig

_KEYS = frozenset({"Listen"})


def parse_operations(table: Table | None) -> OperationsConfig:
    if table is None:
        return OperationsConfig()
    table.refuse_unknown(_KEYS)
    if table.string("Listen") is None:
        return OperationsConfig()
    host, port = parse_listen(table, 0)
    if port == 0:
        return OperationsConfig()
    return OperationsConfig(host=host, port=port)
