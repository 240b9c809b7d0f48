"""Appends flushed and indexed by someone other than the writer: several processes append to
their own packs, one flushes each pack once and indexes everything, and nothing is named
before that."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.content.texts import encode_text
from mailfathom.domain.errors import ContentMissingError


def _mail(n: int) -> bytes:
    return f"Subject: {n}\r\nMessage-ID: <{n}@example.test>\r\n\r\nbody {n}\r\n".encode()


def test_pending_appends_are_unknown_until_committed_then_read_back(tmp_path: Path) -> None:
    first, second = PackContentStore(tmp_path), PackContentStore(tmp_path)
    flusher = PackContentStore(tmp_path)
    raws = [_mail(n) for n in range(6)]
    text, _ = encode_text("body 0", "<p>body 0</p>")
    keys_a, pending_a = first.append_pending(raws[:3], [text, None, None])
    keys_b, pending_b = second.append_pending(raws[3:])
    assert keys_a + keys_b == [hashlib.sha256(r).hexdigest() for r in raws]
    assert {entry[1] for entry in pending_a}.isdisjoint({entry[1] for entry in pending_b})
    for key in keys_a + keys_b:
        assert flusher.locate(key) is None
        with pytest.raises(ContentMissingError):
            flusher.get(key)

    flusher.commit_pending([*pending_a, *pending_b])

    reader = PackContentStore(tmp_path)
    assert [reader.get(k) for k in keys_a + keys_b] == raws
    assert reader.get_text(keys_a[0], with_html=True) == ("body 0", "<p>body 0</p>")
    for store in (first, second, flusher, reader):
        store.close()


def test_an_append_never_committed_is_stored_again_by_the_next_writer(tmp_path: Path) -> None:
    # As after a stop between the append and its commit: the octets are unused space and
    # the message is written again in full when it next arrives.
    interrupted = PackContentStore(tmp_path)
    raw = _mail(1)
    (key,), pending = interrupted.append_pending([raw])
    assert len(pending) == 1
    interrupted.close()

    again = PackContentStore(tmp_path)
    (same,), pending = again.append_pending([raw])
    assert same == key
    assert len(pending) == 1  # not taken for held
    again.commit_pending(pending)
    assert again.get(key) == raw
    assert again.append_pending([raw]) == ([key], [])  # held now: nothing appended
    again.close()


def test_the_same_message_twice_in_one_append_is_one_record(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    raw = _mail(7)
    keys, pending = store.append_pending([raw, raw])
    assert keys[0] == keys[1]
    assert len(pending) == 1
    store.commit_pending(pending)
    store.commit_pending(pending)  # committing twice changes nothing
    assert store.get(keys[0]) == raw
    store.close()
