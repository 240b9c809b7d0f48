"""The content store contract's subject: each adapter, with what a test does behind its back
(another instance on the same storage, a lost or damaged copy) done its own way."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pytest

from mailfathom.adapters.content.objects import ObjectContentStore
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.content.places import HeldContent
from mailfathom.domain.content_storage import ObjectStoreConfig
from servers.s3 import S3Server


class Storage(Protocol):
    def open(self) -> HeldContent:
        """Another store on the same storage, as another process or machine has."""
        ...

    def lose(self, key: str) -> None:
        """Remove every copy of `key`'s MIME behind the store's back."""
        ...

    def damage(self, key: str) -> None:
        """Change one octet of `key`'s MIME where it is kept."""
        ...

    def damage_text(self, key: str) -> None:
        """Change one octet inside `key`'s text record where it is kept."""
        ...


@dataclass
class PackStorage:
    root: Path
    opened: list[PackContentStore] = field(default_factory=list)

    def open(self) -> PackContentStore:
        store = PackContentStore(self.root)
        self.opened.append(store)
        return store

    def lose(self, key: str) -> None:
        location = self.open().locate(key)
        assert location is not None
        os.unlink(location.path)

    def damage(self, key: str) -> None:
        self._flip(key, 0)

    def damage_text(self, key: str) -> None:
        self._flip(key, None)

    def _flip(self, key: str, at: int | None) -> None:
        location = self.open().locate(key)
        assert location is not None
        offset = location.offset + (at if at is not None else location.length + 20)
        with location.path.open("r+b") as pack:
            pack.seek(offset)
            octet = pack.read(1)
            pack.seek(offset)
            pack.write(bytes([octet[0] ^ 0x01]))

    def close(self) -> None:
        for store in self.opened:
            store.close()


@dataclass
class ObjectStorage:
    config: ObjectStoreConfig
    server: S3Server
    opened: list[ObjectContentStore] = field(default_factory=list)

    def open(self) -> ObjectContentStore:
        store = ObjectContentStore(self.config)
        self.opened.append(store)
        return store

    def name(self, key: str, *, text: bool = False) -> str:
        return ObjectContentStore(self.config).object_name(key, text=text)

    def lose(self, key: str) -> None:
        self.server.admin_client().delete_object(Bucket=self.config.bucket, Key=self.name(key))

    def damage(self, key: str) -> None:
        self._flip(self.name(key), 0)

    def damage_text(self, key: str) -> None:
        self._flip(self.name(key, text=True), 32 + 20)

    def _flip(self, name: str, at: int) -> None:
        admin = self.server.admin_client()
        octets = bytearray(admin.get_object(Bucket=self.config.bucket, Key=name)["Body"].read())
        octets[at] ^= 0x01
        admin.put_object(Bucket=self.config.bucket, Key=name, Body=bytes(octets))

    def close(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=["packs", pytest.param("s3", marks=pytest.mark.process)])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """Each content store adapter in turn, on storage of its own for the test."""
    held: PackStorage | ObjectStorage
    if request.param == "packs":
        held = PackStorage(tmp_path)
    else:
        config: ObjectStoreConfig = request.getfixturevalue("object_store")
        held = ObjectStorage(config, request.getfixturevalue("s3_server"))
    try:
        yield held
    finally:
        held.close()
