"""Which content store a deployment keeps message content in (`[Store] ContentStore`), as a
value that can be handed to another process to open the same store there (the preparer's
worker processes write to it directly)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mailfathom.adapters.content.objects import ObjectContentStore
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.domain.config import StoreConfig
from mailfathom.domain.content_storage import ContentStoreKind, ObjectStoreConfig
from mailfathom.domain.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class PackPlace:
    """Pack files under `root` (one machine)."""

    root: Path

    def open(self) -> PackContentStore:
        return PackContentStore(self.root)


@dataclass(frozen=True, slots=True)
class ObjectPlace:
    """An S3-compatible object store (any number of machines)."""

    config: ObjectStoreConfig

    def open(self) -> ObjectContentStore:
        return ObjectContentStore(self.config)


ContentPlace = PackPlace | ObjectPlace
HeldContent = PackContentStore | ObjectContentStore


def content_place(store: StoreConfig) -> ContentPlace:
    """Where `store` says content is kept."""
    if store.content_store is ContentStoreKind.PACKS:
        return PackPlace(store.content_dir)
    if store.object_store is None:
        raise ConfigurationError('Store.ObjectStore: is required with ContentStore = "s3"')
    return ObjectPlace(store.object_store)
