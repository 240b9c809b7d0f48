"""The content store: idempotent, content-addressed, and honest about damage."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mailfathom.adapters.content.files import FileContentStore
from mailfathom.domain.errors import ContentMissingError


def test_the_same_octets_are_stored_once_under_their_hash(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    keys = store.put_many([b"one", b"two", b"one"])
    assert keys[0] == keys[2] == hashlib.sha256(b"one").hexdigest()
    assert store.get(keys[1]) == b"two"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 2
    assert FileContentStore(tmp_path).put(b"one") == keys[0]


def test_damaged_or_missing_content_is_reported_not_served(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    key = store.put(b"original")
    store.path_for(key).write_bytes(b"tampered")
    with pytest.raises(ContentMissingError) as raised:
        store.get(key)
    assert raised.value.code == 55001
    store.discard(key)
    with pytest.raises(ContentMissingError):
        store.get(key)
    with pytest.raises(ContentMissingError):
        store.get("not-a-key")


def test_a_file_removed_behind_the_store_is_written_again(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    key = store.put(b"message")
    store.path_for(key).unlink()
    fresh = FileContentStore(tmp_path)
    assert fresh.put(b"message") == key
    assert fresh.get(key) == b"message"


def test_used_octets_counts_what_is_held(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    store.put_many([b"a" * 10, b"b" * 20])
    assert store.used_octets() == 30


def test_a_damaged_copy_of_the_same_size_is_replaced_when_stored_again(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    key = store.put(b"abcdef")
    store.path_for(key).write_bytes(b"abcdeX")
    assert store.put(b"abcdef") == key
    assert store.get(key) == b"abcdef"


def test_half_written_files_left_by_a_killed_writer_are_swept(tmp_path: Path) -> None:
    store = FileContentStore(tmp_path)
    key = store.put(b"kept")
    leftover = store.path_for(key).parent / ".tmp-abandoned"
    leftover.write_bytes(b"partial")
    assert store.sweep_temporary(older_than_seconds=3600) == 0
    assert store.sweep_temporary(older_than_seconds=-1) == 1
    assert not leftover.exists()
    assert store.get(key) == b"kept"
