"""The `[Sync]` section: whether synchronization runs, the size of its batches, and how long
a worker's lease on an account lasts."""

from __future__ import annotations

from mailfathom.adapters.config.toml_tables import Table
from mailfathom.domain.config import SyncConfig

_SYNC_KEYS = frozenset({"Enabled", "BatchMessages", "BatchSize", "LeaseSeconds"})
_LEASE_RANGE = (1.0, 3600.0)


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
    lease = table.number("LeaseSeconds")
    if lease is not None and not _LEASE_RANGE[0] <= lease <= _LEASE_RANGE[1]:
        table.problems.add(table.at("LeaseSeconds"), "must be from 1 to 3600")
        lease = None
    return SyncConfig(
        enabled=enabled,
        batch_messages=defaults.batch_messages if batch_messages is None else batch_messages,
        batch_octets=defaults.batch_octets if batch_octets is None else batch_octets,
        lease_seconds=defaults.lease_seconds if lease is None else lease,
    )
