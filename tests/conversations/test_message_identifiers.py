"""Reading message identifiers out of Message-ID, In-Reply-To and References values."""

from __future__ import annotations

import pytest

from mailfathom.domain.conversations import ThreadInput, connected_identifiers
from mailfathom.domain.identifiers import normalize_references, parse_msg_ids


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # The reference server's own test vectors (lib-mail/test-message-id.c).
        ("<foo@bar>", ("foo@bar",)),
        ("<foo@bar>,skipped,<foo2@bar2>", ("foo@bar", "foo2@bar2")),
        ("(c) < (c) foo (c) @ (c) bar (c) > (c)", ("foo@bar",)),
        ('<"foo 2"@bar>', ("foo 2@bar",)),
    ],
)
def test_identifiers_are_read_like_the_reference_server(
    value: str, expected: tuple[str, ...]
) -> None:
    assert parse_msg_ids(value) == expected


@pytest.mark.parametrize("value", [None, "", "   ", "no brackets@here", "<a@b", "<>", "<abc>"])
def test_values_without_a_usable_identifier_give_none(value: str | None) -> None:
    assert parse_msg_ids(value) == ()


def test_references_keep_order_and_repeats() -> None:
    value = "<a@x>\r\n <b@x>\t<a@x>"
    assert parse_msg_ids(value) == ("a@x", "b@x", "a@x")


def test_folding_inside_an_identifier_is_removed() -> None:
    assert parse_msg_ids("<1234.5678\r\n\t.abcd@example.org>") == ("1234.5678.abcd@example.org",)
    assert parse_msg_ids("< a@b >") == ("a@b",)


def test_text_between_identifiers_is_ignored() -> None:
    value = '<a@x> (Joe\'s message of "Mon, 1 Jan 2001") garbage, <b@x> trailing'
    assert parse_msg_ids(value) == ("a@x", "b@x")
    assert parse_msg_ids('Your message of "Mon, 1 Jan 2001" <c@x>') == ("c@x",)


def test_a_token_without_at_sign_is_skipped_and_reading_resumes() -> None:
    assert parse_msg_ids("<not-an-id> <a@x> <also not>") == ("a@x",)


def test_a_token_the_grammar_rejects_is_skipped_and_reading_resumes() -> None:
    # A comment makes the token go through the RFC 5322 grammar, which needs "@" after
    # the first atom.
    assert parse_msg_ids("<a (note) b@c> <q@r>") == ("q@r",)
    # An unclosed comment spoils only its own token.
    assert parse_msg_ids("<a (unclosed@c> <q@r>") == ("q@r",)


def test_comments_and_quotes_inside_a_token_follow_rfc_5322() -> None:
    assert parse_msg_ids("<a.b (x) . c@d (y) . e>") == ("a.b.c@d.e",)
    assert parse_msg_ids('<"a\\"b"@c>') == ('a"b@c',)


def test_domain_literals_and_non_ascii_are_kept_as_written() -> None:
    assert parse_msg_ids("<x@[192.0.2.1]>") == ("x@[192.0.2.1]",)
    assert parse_msg_ids("<grüße@例え.jp>") == ("grüße@例え.jp",)


def test_identifiers_are_case_sensitive() -> None:
    assert parse_msg_ids("<ABC@Example.ORG>") == ("ABC@Example.ORG",)


def test_a_stray_open_bracket_stays_inside_the_token() -> None:
    # Only ">" ends a token, as in the reference server: "<abc <def@x>" is one token.
    assert parse_msg_ids("<abc <def@x>") == ("abc<def@x",)


def test_a_nul_ends_the_value() -> None:
    assert parse_msg_ids("<a@x>\0<b@x>") == ("a@x",)


def test_references_win_over_in_reply_to() -> None:
    assert normalize_references(("a@x", "b@x"), ("c@x",), "me@x") == ("a@x", "b@x")


def test_in_reply_to_is_used_only_when_references_names_nothing() -> None:
    assert normalize_references((), ("c@x", "d@x"), "me@x") == ("c@x",)
    assert normalize_references((), (), "me@x") == ()


def test_a_message_never_references_itself() -> None:
    assert normalize_references(("a@x", "me@x", "b@x"), (), "me@x") == ("a@x", "b@x")
    assert normalize_references(("me@x",), ("me@x", "c@x"), "me@x") == ("c@x",)


def test_connected_identifiers_cover_every_header() -> None:
    message = ThreadInput(
        key="k",
        message_id="me@x",
        in_reply_to=("p@x", "other@x"),
        references=("r@x", "p@x"),
        sent_at=None,
    )
    assert connected_identifiers(message) == ("me@x", "r@x", "p@x", "other@x")
