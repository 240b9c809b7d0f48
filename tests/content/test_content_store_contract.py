"""The content store contract, which every adapter (pack files, an S3-compatible object
store) keeps: content addressed by its SHA-256, stored idempotently, shared by every store on
the same storage, checked on every read, and missing or damaged content reported as missing
(55001), never served."""

from __future__ import annotations

import hashlib
import random
import threading

import pytest

from content.conftest import Storage
from mailfathom.adapters.content import packs
from mailfathom.adapters.content.texts import encode_text
from mailfathom.domain.errors import ContentMissingError

PLAIN = "Grüße aus Köln. \u2603 a line of body text\n" * 40
HTML = "<p>Grüße</p>" * 20


def _text(plain: str, html: str | None) -> bytes:
    return encode_text(plain, html)[0]


def _mail(n: int) -> bytes:
    return f"Subject: {n}\r\nMessage-ID: <{n}@example.test>\r\n\r\nbody {n}\r\n".encode()


def test_content_is_stored_once_under_its_hash_and_read_by_every_store(storage: Storage) -> None:
    store = storage.open()
    keys = store.put_many([b"one", b"two", b"one"])
    assert keys[0] == keys[2] == hashlib.sha256(b"one").hexdigest()
    assert store.get(keys[1]) == b"two"
    other = storage.open()
    assert other.get(keys[0]) == b"one"
    assert other.put(b"one") == keys[0]
    assert other.exists(keys[0])
    assert not other.exists(hashlib.sha256(b"never stored").hexdigest())
    assert not other.exists("not-a-key")


def test_a_batch_is_stored_whole_and_read_back_in_order(storage: Storage) -> None:
    store = storage.open()
    raws = [_mail(n) * 20 for n in range(120)]
    keys = store.write_many(raws, [_text(f"body {n}", None) for n in range(120)])
    assert keys == [hashlib.sha256(raw).hexdigest() for raw in raws]
    reader = storage.open()
    assert [reader.get(k) for k in keys] == raws
    assert [reader.get_text(k)[0] for k in keys] == [f"body {n}" for n in range(120)]


def test_damaged_or_missing_content_is_reported_not_served(storage: Storage) -> None:
    store = storage.open()
    key = store.put(b"original content")
    storage.damage(key)
    with pytest.raises(ContentMissingError) as raised:
        store.get(key)
    assert raised.value.code == 55001
    store.discard(key)
    with pytest.raises(ContentMissingError):
        store.get(key)
    with pytest.raises(ContentMissingError):
        store.get("not-a-key")
    with pytest.raises(ContentMissingError):
        store.get(hashlib.sha256(b"never stored").hexdigest())


def test_lost_content_is_missing_and_storing_it_again_restores_it(storage: Storage) -> None:
    store = storage.open()
    key = store.put(b"message")
    storage.lose(key)
    fresh = storage.open()
    with pytest.raises(ContentMissingError):
        fresh.get(key)
    assert fresh.put(b"message") == key
    assert fresh.get(key) == b"message"
    assert storage.open().get(key) == b"message"


def test_a_damaged_copy_is_replaced_when_stored_again(storage: Storage) -> None:
    store = storage.open()
    key = store.put(b"abcdef")
    storage.damage(key)
    assert store.put(b"abcdef") == key
    assert store.get(key) == b"abcdef"


def test_text_is_stored_with_its_mime(storage: Storage) -> None:
    store = storage.open()
    raws = [b"Subject: one\r\n\r\nfirst", b"Subject: two\r\n\r\nsecond", b"Subject: 3\r\n\r\n"]
    keys = store.write_many(raws, [_text(PLAIN, HTML), _text("second", None), None])
    reader = storage.open()
    assert reader.get_text(keys[0]) == (PLAIN, HTML)
    assert reader.get_text(keys[1]) == ("second", None)
    with pytest.raises(ContentMissingError):
        reader.get_text(keys[2])  # stored without text
    assert [reader.get(k) for k in keys] == raws
    with pytest.raises(ContentMissingError):
        reader.get_text("not a key")


def test_the_html_body_is_decoded_only_when_asked_for(storage: Storage) -> None:
    store = storage.open()
    (key,) = store.write_many([b"Subject: h\r\n\r\nx"], [_text(PLAIN, HTML)])
    assert store.get_text(key, with_html=False) == (PLAIN, None)
    assert store.get_text(key) == (PLAIN, HTML)


def test_a_damaged_text_is_missing_text_while_the_mime_stays_readable(storage: Storage) -> None:
    store = storage.open()
    raw = b"Subject: one\r\n\r\nbody"
    (key,) = store.write_many([raw], [_text(PLAIN, None)])
    storage.damage_text(key)
    with pytest.raises(ContentMissingError):
        store.get_text(key)
    assert store.get(key) == raw


def test_mime_stored_without_text_gets_it_when_stored_again_with_text(storage: Storage) -> None:
    store = storage.open()
    raw = b"Subject: earlier\r\n\r\nbody"
    (key,) = store.write_many([raw])
    assert store.write_many([raw], [_text("body", None)]) == [key]
    assert storage.open().get_text(key) == ("body", None)


def test_storing_mime_alone_keeps_the_text_already_held(storage: Storage) -> None:
    store = storage.open()
    raw = b"Subject: repaired\r\n\r\nbody"
    (key,) = store.write_many([raw], [_text("body", None)])
    assert store.put(raw) == key
    assert store.get_text(key) == ("body", None)


def test_discarded_content_stays_gone_and_the_rest_readable_after_tidying(
    storage: Storage,
) -> None:
    store = storage.open()
    raws = [f"message {i}".encode() * 100 for i in range(10)]
    keys = store.write_many(raws, [_text(f"text {i}", None) for i in range(10)])
    for key in keys[:6]:
        store.discard(key)
    tidier = storage.open()
    tidier.sweep_temporary()
    tidier.reclaim()
    for key in keys[:6]:
        with pytest.raises(ContentMissingError):
            tidier.get(key)
        with pytest.raises(ContentMissingError):
            tidier.get_text(key)
    assert [tidier.get(k) for k in keys[6:]] == raws[6:]
    assert tidier.used_octets() >= sum(map(len, raws[6:]))


def test_appends_are_readable_once_committed(storage: Storage) -> None:
    writer, committer = storage.open(), storage.open()
    raws = [_mail(n) for n in range(4)]
    keys, pending = writer.append_pending(raws, [_text("body 0", None), None, None, None])
    assert keys == [hashlib.sha256(raw).hexdigest() for raw in raws]
    committer.commit_pending(pending)
    reader = storage.open()
    assert [reader.get(k) for k in keys] == raws
    assert reader.get_text(keys[0]) == ("body 0", None)


def test_concurrent_reads_during_writes_and_compaction_see_only_whole_right_content(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(packs, "PACK_LIMIT", 16 * 1024)  # a new pack every few batches
    store, tidier = storage.open(), storage.open()
    kept: dict[str, tuple[bytes, str]] = {}
    listed: list[str] = []  # keys readers may pick, grown only once stored

    def stored(batch: int) -> None:
        raws = [_mail(batch * 100 + n) * (20 + n) for n in range(10)]
        texts = [f"text {batch}.{n} " * (10 + n) for n in range(10)]
        keys = store.write_many(raws, [_text(text, None) for text in texts])
        for n, key in enumerate(keys):
            if n < 4:
                kept[key] = (raws[n], texts[n])
                listed.append(key)
            else:
                store.discard(key)  # most of each pack dead: compaction moves the rest

    stored(0)
    done = threading.Event()
    reads = [0]
    wrong: list[str] = []

    def read(seed: int) -> None:
        picks = random.Random(seed)
        while not done.is_set():
            key = picks.choice(listed)
            raw, text = kept[key]
            if store.get(key) != raw or store.get_text(key) != (text, None):
                wrong.append(key)
            if tidier.get_text(key) != (text, None):
                wrong.append(key)
            reads[0] += 1

    readers = [threading.Thread(target=read, args=(seed,)) for seed in range(4)]
    for reader in readers:
        reader.start()
    try:
        for batch in range(1, 25):
            stored(batch)
            (store if batch % 2 else tidier).reclaim()
            tidier.sweep_temporary()
    finally:
        done.set()
        for reader in readers:
            reader.join()
    assert not wrong
    assert reads[0] > 0
    assert all(store.get(key) == raw for key, (raw, _) in kept.items())
