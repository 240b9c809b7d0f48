"""The `[Sync]` section: whether synchronization runs, and the size of its batches."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain.config import SyncConfig

_SYNC_KEYS = frozenset({"Enabled", "BatchMessages", "BatchSize"})


def parse_sync(table: Table | None) -> SyncConfig:
    defaults = SyncConfig()
    if table is None:
        return defaults
    table.refuse_unknown(_SYNC_KEYS)
    enabled = table.boolean("Enabled", defaults.enabled)
    batch_messages = table.integer("BatchMessages")
    if batch_messages is not None and batch_messages <= 0:
        table.problems.add(table.at("BatchMessages"), "must be greater than zero")
        batch_messages = None
    batch_octets = table.size("BatchSize")
    return SyncConfig(
        enabled=enabled,
        batch_messages=defaults.batch_messages if batch_messages is None else batch_messages,
        batch_octets=defaults.batch_octets if batch_octets is None else batch_octets,
    )
