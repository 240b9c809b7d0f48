"""The `[MachineAuthorship]` section: whether stored mail is read for machine authorship."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain.config import MachineAuthorshipConfig

_MACHINE_AUTHORSHIP_KEYS = frozenset({"Enabled"})


def parse_machine_authorship(table: Table | None) -> MachineAuthorshipConfig:
    defaults = MachineAuthorshipConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_MACHINE_AUTHORSHIP_KEYS)
    return MachineAuthorshipConfig(enabled=table.boolean("Enabled", defaults.enabled))
