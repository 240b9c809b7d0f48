"""Messages' text kept in the packs right after their MIME: one index row per message, read
back as written, checked for damage, moved with its MIME by compaction, and added to copies
stored before text was kept there."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from mailfathom.adapters.content import packs
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.content.texts import decode_text, encode_text, is_text_record
from mailfathom.domain.errors import ContentMissingError

PLAIN = "Grüße aus Köln. \u2603 and a surrogate-free line\n" * 40
HTML = "<p>Grüße</p>" * 20


def _text(plain: str, html: str | None) -> bytes:
    record, plain_octets = encode_text(plain, html)
    assert plain_octets == plain.encode()
    return record


def _index_rows(root: Path) -> list[tuple[str, int | None]]:
    with sqlite3.connect(root / "index.sqlite3") as db:
        return list(db.execute("SELECT key, text_length FROM entries ORDER BY key"))


def test_a_record_reads_back_as_written_and_damage_is_detected() -> None:
    for plain, html in ((PLAIN, HTML), ("", None), ("only plain", None), ("", "")):
        record = _text(plain, html)
        assert is_text_record(record)
        assert decode_text(record) == (plain, html)
        assert decode_text(record, with_html=False) == (plain, None)
        for position in (0, 5, 12, len(record) - 1):
            damaged = bytearray(record)
            damaged[position] ^= 0x01
            assert not is_text_record(bytes(damaged))
            with pytest.raises(ContentMissingError):
                decode_text(bytes(damaged))
        with pytest.raises(ContentMissingError):
            decode_text(record[:-1] if len(record) > 21 else record[:10])


def test_text_is_stored_with_its_mime_under_one_index_row(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    raws = [b"Subject: one\r\n\r\nfirst", b"Subject: two\r\n\r\nsecond", b"Subject: 3\r\n\r\n"]
    texts = [_text(PLAIN, HTML), _text("second", None), None]
    keys = store.write_many(raws, texts)
    assert store.get_text(keys[0]) == (PLAIN, HTML)
    assert store.get_text(keys[1]) == ("second", None)
    with pytest.raises(ContentMissingError):
        store.get_text(keys[2])  # stored without text
    assert [store.get(k) for k in keys] == raws
    rows = dict(_index_rows(tmp_path))
    assert set(rows) == set(keys)
    assert rows[keys[2]] is None
    assert store.used_octets() == sum(map(len, raws)) + sum(len(t or b"") for t in texts)
    with pytest.raises(ContentMissingError):
        store.get_text("not a key")


def test_compaction_moves_text_with_its_mime_and_drops_a_damaged_one(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    raws = [f"Subject: {i}\r\n\r\n".encode() * 50 for i in range(6)]
    keys = store.write_many(raws, [_text(f"text {i}", f"<b>{i}</b>") for i in range(6)])
    damaged = keys[5]
    location = store.locate(damaged)
    assert location is not None
    with location.path.open("r+b") as pack:
        pack.seek(location.offset + location.length + 25)
        pack.write(b"#")
    store.close()
    store = PackContentStore(tmp_path)  # another writer, so the first pack can be rewritten
    for key in keys[:3]:
        store.discard(key)
    assert store.reclaim() == 1
    for i in (3, 4):
        assert store.get(keys[i]) == raws[i]
        assert store.get_text(keys[i]) == (f"text {i}", f"<b>{i}</b>")
    assert store.get(damaged) == raws[5]
    with pytest.raises(ContentMissingError):
        store.get_text(damaged)


def test_mime_stored_without_text_gets_it_when_stored_again_with_text(tmp_path: Path) -> None:
    store = PackContentStore(tmp_path)
    raw = b"Subject: earlier\r\n\r\nbody"
    (key,) = store.write_many([raw])
    assert store.write_many([raw], [_text("body", None)]) == [key]
    assert store.get_text(key) == ("body", None)
    assert store.write_many([raw], [_text("changed", None)]) == [key]
    assert store.get_text(key) == ("body", None)  # a copy with text is kept as it is
    assert len(_index_rows(tmp_path)) == 1


def test_an_index_made_before_texts_were_kept_is_upgraded(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "index.sqlite3") as db:
        db.execute(
            "CREATE TABLE entries (key TEXT PRIMARY KEY, pack TEXT NOT NULL, "
            "offset INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID"
        )
    store = PackContentStore(tmp_path)
    raw = b"Subject: new\r\n\r\nbody"
    (key,) = store.write_many([raw], [_text("body", "<i>body</i>")])
    assert store.get_text(key) == ("body", "<i>body</i>")
    store.close()
    assert PackContentStore(tmp_path).get_text(key) == ("body", "<i>body</i>")


def _open_and_store(root: str, n: int) -> str:
    store = PackContentStore(Path(root))
    try:
        store.write_many([f"from process {n}".encode()], [_text(f"text {n}", None)])
    finally:
        store.close()
    return "ok"


def test_processes_opening_a_new_store_at_the_same_moment_all_succeed(tmp_path: Path) -> None:
    # The preparation workers open the index as they start. Switching a new index file to
    # write-ahead logging from two processes at once made one of them fail ("database is
    # locked") in about 3 % of openings.
    context = multiprocessing.get_context("fork")
    with context.Pool(3) as pool:
        for round_ in range(60):
            root = tmp_path / f"round-{round_}"
            root.mkdir()
            results = pool.starmap(_open_and_store, [(str(root), n) for n in range(3)])
            assert results == ["ok"] * 3


def _open_packs(root: Path) -> list[str]:
    """Pack files under `root` this process holds open (deleted ones end in " (deleted)")."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(root)) and ".pack" in target:
            found.append(target)
    return found


def test_packs_stay_open_for_reading_within_a_bound_and_compaction_closes_them(
    tmp_path: Path,
) -> None:
    keys: list[str] = []
    for n in range(packs._OPEN_FOR_READING + 4):  # a writer per pack: each its own pack
        writer = PackContentStore(tmp_path)
        keys += writer.write_many([f"Subject: {n}\r\n\r\n".encode() * 20], [_text(f"t{n}", None)])
        writer.close()
    assert not _open_packs(tmp_path)
    reader = PackContentStore(tmp_path)
    for n, key in enumerate(keys):
        assert reader.get_text(key) == (f"t{n}", None)
        assert reader.get(key)
    assert len(_open_packs(tmp_path)) == packs._OPEN_FOR_READING
    for key in keys[:-1]:
        reader.discard(key)
    assert reader.reclaim() == len(keys) - 1
    assert reader.get_text(keys[-1]) == (f"t{len(keys) - 1}", None)
    assert not [p for p in _open_packs(tmp_path) if p.endswith("(deleted)")]
    reader.close()
    assert not _open_packs(tmp_path)


def test_a_record_keeps_no_nul_characters_as_no_store_does() -> None:
    record, plain_octets = encode_text("a\x00b", "<p>\x00</p>")
    assert plain_octets == b"ab"
    assert decode_text(record) == ("ab", "<p></p>")
