from __future__ import annotations

import textwrap
from datetime import UTC, datetime, timedelta, timezone

from mailfathom.adapters.mime import normalize_headers, normalize_message
from mailfathom.domain.message import HeaderRole, Participant

from .build import raw
from .conftest import Normalize


def _message(headers: str, body: str = "Hello.\n") -> bytes:
    return raw(textwrap.dedent(headers).strip("\n") + "\n\n" + body)


def test_participants_keep_their_roles_in_header_order() -> None:
    message = normalize_message(
        _message(
            """
            From: Alice <alice@example.com>
            Sender: list-bounces@example.org
            Reply-To: replies@example.org
            To: Bob <bob@example.com>, carol@example.com
            Cc: Dave <dave@example.net>
            Bcc: eve@example.net
            Subject: roles
            """
        )
    )
    assert message.participants == (
        Participant(HeaderRole.FROM, "alice@example.com", "Alice"),
        Participant(HeaderRole.SENDER, "list-bounces@example.org", None),
        Participant(HeaderRole.REPLY_TO, "replies@example.org", None),
        Participant(HeaderRole.TO, "bob@example.com", "Bob"),
        Participant(HeaderRole.TO, "carol@example.com", None),
        Participant(HeaderRole.CC, "dave@example.net", "Dave"),
        Participant(HeaderRole.BCC, "eve@example.net", None),
    )
    assert message.defects == ()


def test_participants_follow_the_order_the_headers_were_written_in() -> None:
    message = normalize_message(_message("To: b@example.com\nFrom: a@example.com"))
    assert [p.role for p in message.participants] == [HeaderRole.TO, HeaderRole.FROM]


def test_address_case_is_kept_and_the_key_is_lower_case() -> None:
    message = normalize_message(_message("From: Some.One@Example.COM"))
    (participant,) = message.participants
    assert participant.address == "Some.One@Example.COM"
    assert participant.address_key == "some.one@example.com"


def test_a_group_contributes_its_members_and_not_its_name() -> None:
    message = normalize_message(
        _message(
            'From: a@example.com\nTo: Team: "Bob B" <bob@example.com>, carol@example.com;,'
            " dave@example.com"
        )
    )
    to = [(p.address, p.display_name) for p in message.participants if p.role is HeaderRole.TO]
    assert to == [
        ("bob@example.com", "Bob B"),
        ("carol@example.com", None),
        ("dave@example.com", None),
    ]
    assert message.defects == ()


def test_an_empty_group_is_not_a_defect() -> None:
    message = normalize_message(
        _message("From: a@example.com\nTo: undisclosed-recipients:;\nCc: unlisted-recipients:; (x)")
    )
    assert [p.role for p in message.participants] == [HeaderRole.FROM]
    assert message.defects == ()


def test_encoded_words_in_display_names_are_decoded() -> None:
    message = normalize_message(
        _message(
            "From: =?UTF-8?Q?J=C3=B6rg_M=C3=BCller?= <joerg@example.de>\n"
            'To: "=?iso-8859-1?b?RnJhbudvaXM=?=" <francois@example.fr>\n'
            "Cc: =?utf-8?B?5bGx55Sw?= =?utf-8?B?5aSq6YOO?= <taro@example.jp>"
        )
    )
    names = [p.display_name for p in message.participants]
    assert names == ["Jörg Müller", "François", "山田太郎"]


def test_an_encoded_word_with_a_comma_stays_one_display_name() -> None:
    message = normalize_message(_message("From: =?utf-8?Q?Doe,_John?= <john@example.com>"))
    assert message.participants == (Participant(HeaderRole.FROM, "john@example.com", "Doe, John"),)
    assert message.defects == ()


def test_raw_utf8_display_names_are_read() -> None:
    message = normalize_message(_message("From: Zoë Ångström <zoe@example.se>"))
    assert message.participants[0].display_name == "Zoë Ångström"


def test_an_address_without_a_mailbox_is_dropped_and_recorded() -> None:
    message = normalize_message(
        _message("From: a@example.com\nTo: root, Nobody <>, ok@example.com\nCc: @example.com")
    )
    assert [p.address for p in message.participants] == ["a@example.com", "ok@example.com"]
    assert message.defects == ("header:to", "header:cc")


def test_the_same_mailbox_twice_in_one_role_is_listed_once() -> None:
    message = normalize_message(
        _message("From: a@example.com\nTo: b@example.com, B <B@example.com>\nCc: b@example.com")
    )
    assert [(p.role, p.address_key) for p in message.participants] == [
        (HeaderRole.FROM, "a@example.com"),
        (HeaderRole.TO, "b@example.com"),
        (HeaderRole.CC, "b@example.com"),
    ]


def test_no_control_character_reaches_a_display_name() -> None:
    message = normalize_message(
        b"From: =?utf-8?q?Evil=0D=0ABcc=3A_x=00y?= <evil@example.com>\r\n\r\nbody\r\n"
    )
    name = message.participants[0].display_name
    assert name == "Evil Bcc: x y"


def test_the_subject_is_decoded_and_unfolded() -> None:
    message = normalize_message(
        _message("Subject: =?utf-8?q?Caf=C3=A9?=\n =?utf-8?q?_au_lait?= and\n\tmore   words")
    )
    assert message.subject == "Café au lait and more words"


def test_a_multi_octet_character_split_across_encoded_words_survives() -> None:
    # "é" is C3 A9 in UTF-8; each encoded word holds one octet of it.
    message = normalize_message(_message("Subject: =?utf-8?q?caf=C3?= =?utf-8?q?=A9?="))
    assert message.subject == "café"


def test_an_unknown_charset_in_the_subject_falls_back_without_raising() -> None:
    message = normalize_message(_message("Subject: =?x-no-such-charset?q?na=C3=AFve?= idea"))
    assert message.subject == "naïve idea"


def test_an_undecodable_encoded_word_is_kept_as_written_and_recorded() -> None:
    message = normalize_message(_message("Subject: =?utf-8?b?#?= hello"))
    assert message.subject == "=?utf-8?b?#?= hello"
    assert message.defects == ("header:subject",)


def test_raw_8bit_subjects_are_decoded_as_utf8_or_windows_1252() -> None:
    utf8 = normalize_message(b"Subject: \xc3\xa9t\xc3\xa9\r\n\r\nx\r\n")
    latin = normalize_message(b"Subject: \xe9t\xe9 \x93quoted\x94\r\n\r\nx\r\n")
    assert utf8.subject == "été"
    assert latin.subject == "été \u201cquoted\u201d"


def test_no_control_character_reaches_the_subject() -> None:
    message = normalize_message(_message("Subject: a=?utf-8?q?=0D=0A=1B=7F?=b"))
    assert message.subject == "a b"


def test_a_missing_subject_is_none_and_an_empty_one_is_empty() -> None:
    assert normalize_message(_message("From: a@example.com")).subject is None
    assert normalize_message(_message("Subject:")).subject == ""


def test_the_date_becomes_an_aware_instant() -> None:
    message = normalize_message(_message("Date: Tue, 02 Jul 2024 09:15:30 +0200"))
    assert message.sent_at == datetime(2024, 7, 2, 9, 15, 30, tzinfo=timezone(timedelta(hours=2)))
    assert message.sent_at is not None
    assert message.sent_at.utcoffset() == timedelta(hours=2)


def test_a_date_without_a_zone_is_taken_as_utc() -> None:
    for value in ("Tue, 02 Jul 2024 09:15:30", "Tue, 02 Jul 2024 09:15:30 -0000"):
        message = normalize_message(_message(f"Date: {value}"))
        assert message.sent_at == datetime(2024, 7, 2, 9, 15, 30, tzinfo=UTC)


def test_obsolete_zone_names_and_two_digit_years_are_read() -> None:
    message = normalize_message(_message("Date: 5 Sep 02 14:03:11 EDT"))
    assert message.sent_at == datetime(2002, 9, 5, 18, 3, 11, tzinfo=UTC)


def test_a_leap_second_is_read_as_the_second_before() -> None:
    message = normalize_message(_message("Date: Sat, 31 Dec 2016 23:59:60 +0000"))
    assert message.sent_at == datetime(2016, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_an_unreadable_date_gives_none_and_a_defect() -> None:
    for value in ("sometime last week", "Mon, 32 Jan 2024 10:00:00 +0000", "Mon, 1 Jan 2024 25:00"):
        message = normalize_message(_message(f"Date: {value}"))
        assert message.sent_at is None
        assert message.defects == ("header:date",)


def test_a_missing_date_gives_none_without_a_defect() -> None:
    message = normalize_message(_message("From: a@example.com"))
    assert message.sent_at is None
    assert message.defects == ()


def test_identifiers_are_read_without_brackets() -> None:
    message = normalize_message(
        _message(
            "Message-ID: <self@example.com>\n"
            "In-Reply-To: <parent@example.com> (sent by someone)\n"
            "References: <root@example.com>\n <parent@example.com> <root@example.com>\n"
            " <self@example.com>"
        )
    )
    assert message.message_id == "self@example.com"
    assert message.in_reply_to == ("parent@example.com",)
    assert message.references == ("root@example.com", "parent@example.com", "root@example.com")
    assert message.thread_parent_reference() == "root@example.com"


def test_references_keep_their_written_order_and_repeats(normalize_both_ways: Normalize) -> None:
    # RFC 5256 section 2.2 takes the last reference as the parent: a repeat written last is
    # the parent, and dropping it would name another one.
    message = normalize_both_ways(
        _message(
            "Message-ID: <own@example.com>\n"
            "In-Reply-To: <x@example.com> <x@example.com>\n"
            "References: <a@example.com> <x@example.com>\n <a@example.com>"
        )
    )
    assert message.references == ("a@example.com", "x@example.com", "a@example.com")
    assert message.in_reply_to == ("x@example.com", "x@example.com")
    assert message.thread_parent_reference() == "a@example.com"


def test_the_parent_named_is_never_the_message_itself(normalize_both_ways: Normalize) -> None:
    message = normalize_both_ways(
        _message(
            "Message-ID: <own@example.com>\nIn-Reply-To: <own@example.com> <parent@example.com>\n"
        )
    )
    assert message.references == ()
    assert message.thread_parent_reference() == "parent@example.com"


def test_a_message_id_without_an_identifier_is_recorded() -> None:
    message = normalize_message(_message("Message-ID: not-an-identifier"))
    assert message.message_id is None
    assert message.defects == ("header:message-id",)


def test_list_id_and_authentication_results_are_collected() -> None:
    message = normalize_message(
        _message(
            "List-Id: Developers <dev.lists.example.org>\n"
            "Authentication-Results: mx.example.com;\n dkim=pass header.d=example.org\n"
            "Authentication-Results: other.example.com; spf=fail"
        )
    )
    assert message.list_id == "dev.lists.example.org"
    assert message.authentication_results == (
        "mx.example.com; dkim=pass header.d=example.org",
        "other.example.com; spf=fail",
    )


def test_a_list_id_without_brackets_is_accepted_when_it_is_one_token() -> None:
    assert normalize_message(_message("List-Id: dev.example.org")).list_id == "dev.example.org"
    assert normalize_message(_message("List-Id: just some words")).list_id is None


def test_a_header_block_alone_gives_a_headers_only_description() -> None:
    header = (
        b"From: Alice <alice@example.com>\r\n"
        b"To: bob@example.com\r\n"
        b"Subject: =?utf-8?q?gro=C3=9F?=\r\n"
        b"Date: Tue, 02 Jul 2024 09:15:30 +0000\r\n"
        b"Message-ID: <big@example.com>\r\n"
        b"Content-Type: multipart/mixed; boundary=x\r\n"
    )
    message = normalize_headers(header)
    assert message.headers_only
    assert message.subject == "groß"
    assert message.message_id == "big@example.com"
    assert message.sent_at == datetime(2024, 7, 2, 9, 15, 30, tzinfo=UTC)
    assert [p.address for p in message.participants] == ["alice@example.com", "bob@example.com"]
    assert message.plain_text == ""
    assert message.html is None
    assert message.parts == ()
    assert message.markers == frozenset()
    assert message.defects == ()


def test_a_header_block_with_its_blank_line_and_some_body_is_still_headers_only() -> None:
    message = normalize_headers(b"Subject: hi\r\n\r\nbody that is ignored\r\n")
    assert message.headers_only
    assert message.subject == "hi"
    assert message.plain_text == ""


def test_quoted_display_names_and_comments_are_read() -> None:
    message = normalize_message(
        _message(
            'From: "Doe, Jane (Sales)" <jane@example.com>\n'
            "To: bob@example.com (Bob Smith), <carol@example.com>\n"
            'Cc: "Q. \\"Quoted\\" Person" <q@example.com>'
        )
    )
    assert [(p.address, p.display_name) for p in message.participants] == [
        ("jane@example.com", "Doe, Jane (Sales)"),
        ("bob@example.com", "Bob Smith"),
        ("carol@example.com", None),
        ("q@example.com", 'Q. "Quoted" Person'),
    ]
