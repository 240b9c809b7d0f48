"""The lean FETCH parsers agree with the grammar of RFC 3501."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mailfathom.adapters.imap.responses import (
    FetchItems,
    compress_uids,
    header_fields,
    parse_internaldate,
    parse_uid_set,
)


def test_internaldate_is_read_with_its_zone_and_a_space_led_day() -> None:
    assert parse_internaldate(b"17-Jul-1996 02:44:25 -0700") == datetime(
        1996, 7, 17, 2, 44, 25, tzinfo=timezone(-timedelta(hours=7))
    )
    assert parse_internaldate(b" 3-Feb-2026 10:00:00 +0000") == datetime(
        2026, 2, 3, 10, 0, tzinfo=UTC
    )
    assert parse_internaldate(b"32-Foo-2026 10:00:00 +0000") is None
    assert parse_internaldate(b"garbage") is None


def test_fetch_items_are_read_around_the_literal() -> None:
    items = FetchItems(
        b"12 (UID 40 RFC822.SIZE 2048 FLAGS (\\Seen $Label1) MODSEQ (77) "
        b'INTERNALDATE "01-Mar-2026 12:00:00 +0100" BODY[] {2048}'
    )
    assert (items.uid, items.size, items.modseq) == (40, 2048, 77)
    assert items.flags is not None
    assert items.flags.seen
    assert items.flags.keywords == {"$label1"}
    assert items.internaldate == datetime(2026, 3, 1, 11, 0, tzinfo=UTC)


def test_uid_sets_round_trip() -> None:
    assert parse_uid_set("1:3,7,9:8") == [1, 2, 3, 7, 8, 9]
    assert compress_uids([9, 1, 2, 3, 7, 8]) == "1:3,7:9"
    assert parse_uid_set(compress_uids([5])) == [5]


def test_a_nil_header_section_is_no_header_at_all() -> None:
    # As Dovecot answers for a message another session expunged before this one was told.
    assert (
        header_fields(b"2 (UID 2 RFC822.SIZE 0 BODY[HEADER.FIELDS (MESSAGE-ID)] NIL)", None) is None
    )
    assert header_fields(b"2 (UID 2 FLAGS (\\Seen) MODSEQ (9))", None) is None
    # A header without the field is a blank line, whichever way it is written.
    assert (
        header_fields(b"4 (UID 4 RFC822.SIZE 41 BODY[HEADER.FIELDS (MESSAGE-ID)] {2}", b"\r\n")
        == b"\r\n"
    )
    assert header_fields(b'4 (UID 4 BODY[HEADER.FIELDS (MESSAGE-ID)] "")', None) == b""
    assert header_fields(b'4 (UID 4 BODY[HEADER.FIELDS (MESSAGE-ID)] "a\\"b")', None) == b'a"b'
