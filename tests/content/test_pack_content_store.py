"""The content store: idempotent, content-addressed, durable per call, honest about damage,
and able to give back the space of discarded mail."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
from pathlib import Path

import pytest

from mailfathom.adapters.content import packs
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.domain.errors import ContentMissingError


def _packs(root: Path) -> list[Path]:
    return sorted((root / "packs").glob("*.pack"))


def _damage(store: PackContentStore, key: str) -> None:
    location = store.locate(key)
    assert location is not None
    with location.path.open("r+b") as pack:
        pack.seek(location.offset + location.length - 1)
        pack.write(b"\x00")


def test_the_same_octets_are_stored_once_under_their_hash(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    keys = store.put_many([b"one", b"two", b"one"])
    assert keys[0] == keys[2] == hashlib.sha256(b"one").hexdigest()
    assert store.get(keys[1]) == b"two"
    assert store.used_octets() == 6
    again = PackContentStore(tmp_path)
    assert again.put_many([b"one", b"three"])[0] == keys[0]
    assert again.used_octets() == 11
    held = sum(p.stat().st_size for p in _packs(tmp_path))
    assert held == 3 * packs.HEADER.size + len(b"one" + b"two" + b"three")


def test_a_batch_is_one_pack_not_a_file_per_message(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    raws = [f"message {i}".encode() * 50 for i in range(300)]
    keys = store.write_many(raws)
    assert len(_packs(tmp_path)) == 1
    assert [store.get(k) for k in keys] == raws
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.parent == tmp_path / "00"]


def test_copies_written_one_file_per_message_are_still_read(tmp_path: Path) -> None:
    raw = b"Subject: older layout\r\n\r\nbody\r\n"
    key = hashlib.sha256(raw).hexdigest()
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / key).write_bytes(raw)
    store = PackContentStore(tmp_path)
    assert store.get(key) == raw
    assert store.exists(key)
    assert store.used_octets() == len(raw)
    store.discard(key)
    assert not (tmp_path / key[:2] / key).exists()


def test_discarded_content_is_reclaimed_and_the_rest_stays_readable(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    first = store.put_many([f"first {i}".encode() * 100 for i in range(10)])
    store.close()
    store = PackContentStore(tmp_path)  # a second writer: a second pack
    second = store.put_many([f"second {i}".encode() * 100 for i in range(10)])
    assert len(_packs(tmp_path)) == 2
    for key in first[:6]:
        store.discard(key)
    assert store.reclaim() == 1
    assert len(_packs(tmp_path)) == 1  # the first pack's live copies moved into the current
    for key in first[6:] + second:
        assert hashlib.sha256(store.get(key)).hexdigest() == key
    for key in first[:6]:
        with pytest.raises(ContentMissingError):
            store.get(key)
    assert store.reclaim() == 0
    assert store.used_octets() == sum(len(store.get(k)) for k in first[6:] + second)


def _hold_a_pack(
    root: str, ready: multiprocessing.synchronize.Event, release: multiprocessing.synchronize.Event
) -> None:
    store = PackContentStore(Path(root))
    key = store.put(b"held by another writer")
    store.discard(key)
    ready.set()
    release.wait(60)  # the test kills this writer first; the bound only ends a stray one


def test_a_pack_another_writer_appends_to_is_never_reclaimed(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    writer = context.Process(target=_hold_a_pack, args=(str(tmp_path), ready, release))
    writer.start()
    try:
        assert ready.wait(30)
        store = PackContentStore(tmp_path)
        assert store.reclaim() == 0
        assert store.sweep_temporary(older_than_seconds=-1) == 0
        assert len(_packs(tmp_path)) == 1
    finally:
        os.kill(writer.pid or 0, signal.SIGKILL)
        writer.join()
    # Once that writer is gone, its pack (nothing in it is indexed any more) can go.
    assert PackContentStore(tmp_path).sweep_temporary(older_than_seconds=-1) == 1
    assert _packs(tmp_path) == []


def test_octets_a_killed_writer_never_indexed_are_swept(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    kept = store.put(b"kept")
    store.close()
    orphan = tmp_path / "packs" / "0123456789abcdef0123456789abcdef.pack"
    orphan.write_bytes(b"half a record")
    legacy = tmp_path / "ab" / ".tmp-abandoned"
    legacy.parent.mkdir()
    legacy.write_bytes(b"partial")
    store = PackContentStore(tmp_path)
    assert store.sweep_temporary(older_than_seconds=3600) == 0
    assert store.sweep_temporary(older_than_seconds=-1) == 2
    assert not orphan.exists()
    assert not legacy.exists()
    assert store.get(kept) == b"kept"


def test_a_full_pack_is_closed_and_a_new_one_begun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packs, "PACK_LIMIT", 4096)
    store = PackContentStore(tmp_path)
    keys = [store.put_many([f"{i}".encode() * 1500])[0] for i in range(6)]
    assert len(_packs(tmp_path)) >= 3
    assert all(store.get(k) for k in keys)


def test_a_store_whose_files_were_deleted_answers_missing_and_creates_nothing(
    tmp_path: Path,
) -> None:
    store = PackContentStore(tmp_path)
    key = store.put_many([b"gone soon"])[0]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            path.unlink()
    with pytest.raises(ContentMissingError):
        store.get(key)
    with pytest.raises(ContentMissingError):
        store.get_text(key)
    assert not store.exists(key)
    # A reader never lays down an empty index of its own beside the writer's.
    assert not (tmp_path / "index.sqlite3").exists()
