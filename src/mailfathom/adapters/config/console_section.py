"""The `[Console]` section: whether `mailfathom serve` serves the owner's console, the
address it listens on (loopback unless the operator writes another), and the name and
origins its passkeys are made for."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.adapters.config.values import parse_listen
from mailfathom.domain.console import DEFAULT_CONSOLE_PORT, ConsoleConfig
from mailfathom.domain.passkeys import DEFAULT_PASSKEY_NAME, name_problem, origin_problem

_KEYS = frozenset({"Enabled", "Listen", "PasskeyName", "PasskeyOrigins"})


def parse_console(table: Table | None) -> ConsoleConfig:
    if table is None:
        return ConsoleConfig()
    table.refuse_unknown(_KEYS)
    host, port = parse_listen(table, DEFAULT_CONSOLE_PORT)
    name = table.string("PasskeyName") or DEFAULT_PASSKEY_NAME
    problem = name_problem(name)
    if problem is not None:
        table.problems.add(table.at("PasskeyName"), problem)
        name = DEFAULT_PASSKEY_NAME
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
    )
