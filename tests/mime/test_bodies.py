from __future__ import annotations

from mailfathom.adapters.mime import normalize_message

from .build import b64, raw


def test_a_single_plain_part_is_the_body_and_not_a_part() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: text/plain; charset=utf-8

            Hello there.
            """
        )
    )
    assert message.plain_text == "Hello there.\n"
    assert message.html is None
    assert message.parts == ()


def test_line_ends_become_line_feeds() -> None:
    message = normalize_message(b"Subject: x\r\n\r\none\r\ntwo\rthree\r\n")
    assert message.plain_text == "one\ntwo\nthree\n"


def test_a_message_without_content_type_is_plain_text() -> None:
    message = normalize_message(raw("Subject: x\n\n<b>not html</b>\n"))
    assert message.plain_text == "<b>not html</b>\n"
    assert message.html is None


def test_the_body_is_decoded_with_its_charset_and_transfer_encoding() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: text/plain; charset=iso-8859-2
            Content-Transfer-Encoding: quoted-printable

            Zaj=B1c =BF=F3=B3w
            """
        )
    )
    assert message.plain_text == "Zając żółw\n"


def test_an_unknown_body_charset_falls_back_to_utf8() -> None:
    message = normalize_message(
        b"Content-Type: text/plain; charset=DEFAULT_CHARSET\r\n\r\nna\xc3\xafve\r\n"
    )
    assert message.plain_text == "naïve\n"


def test_an_unknown_body_charset_with_non_utf8_octets_uses_windows_1252() -> None:
    message = normalize_message(b"Content-Type: text/plain; charset=bogus\r\n\r\n\x93hi\x94\r\n")
    assert message.plain_text == "\u201chi\u201d\n"


def test_a_wrong_charset_is_decoded_with_replacement_characters() -> None:
    message = normalize_message(b"Content-Type: text/plain; charset=utf-8\r\n\r\nbad \xff here\r\n")
    assert message.plain_text == "bad \ufffd here\n"


def test_a_non_text_codec_named_as_charset_is_not_used() -> None:
    message = normalize_message(b"Content-Type: text/plain; charset=zlib\r\n\r\nplain words\r\n")
    assert message.plain_text == "plain words\n"


def test_nul_and_other_control_characters_are_removed_from_body_text() -> None:
    message = normalize_message(b"Subject: x\r\n\r\na\x00b\x1b[31mc\x07\td\r\n")
    assert message.plain_text == "ab[31mc\td\n"


def test_the_plain_alternative_is_the_text_and_the_html_is_kept() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/alternative; boundary=alt

            --alt
            Content-Type: text/plain; charset=utf-8

            Plain version.
            --alt
            Content-Type: text/html; charset=utf-8

            <p>HTML <b>version</b>.</p>
            --alt--
            """
        )
    )
    assert message.plain_text.strip() == "Plain version."
    assert message.html is not None
    assert message.html.strip() == "<p>HTML <b>version</b>.</p>"
    assert message.parts == ()


def test_an_html_only_message_is_rendered_to_text() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: text/html; charset=utf-8

            <html><head><style>p {color: red}</style></head>
            <body><h1>Title</h1><p>First&nbsp;paragraph &amp; more.</p>
            <ul><li>one</li></ul></body></html>
            """
        )
    )
    assert "Title" in message.plain_text
    assert "First paragraph & more." in message.plain_text
    assert "one" in message.plain_text
    assert "<" not in message.plain_text
    assert "color" not in message.plain_text
    assert message.html is not None
    assert "<h1>Title</h1>" in message.html


def test_an_empty_plain_alternative_does_not_hide_the_html() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/alternative; boundary=alt

            --alt
            Content-Type: text/plain


            --alt
            Content-Type: text/html

            <p>Only here.</p>
            --alt--
            """
        )
    )
    assert message.plain_text.strip() == "Only here."


def test_the_html_charset_can_come_from_a_meta_element() -> None:
    body = b'<html><head><meta charset="koi8-r"></head><body>' + "Привет".encode("koi8-r")
    message = normalize_message(b"Content-Type: text/html\r\n\r\n" + body + b"</body></html>")
    assert "Привет" in message.plain_text


def test_the_body_inside_related_and_alternative_is_found() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: multipart/related; boundary=rel

            --rel
            Content-Type: multipart/alternative; boundary=alt

            --alt
            Content-Type: text/plain

            Deep plain.
            --alt
            Content-Type: text/html

            <p>Deep html <img src="cid:logo@x"></p>
            --alt--
            --rel
            Content-Type: image/png
            Content-ID: <logo@x>

            PNG
            --rel--
            --mix
            Content-Type: application/pdf; name=a.pdf

            PDF
            --mix--
            """
        )
    )
    assert message.plain_text.strip() == "Deep plain."
    assert message.html is not None
    assert "Deep html" in message.html
    assert [part.part_path for part in message.parts] == ["1.2", "2"]


def test_every_inline_text_of_a_mixed_message_is_the_body_in_order() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            preamble is not shown
            --mix
            Content-Type: text/plain

            The message.
            --mix
            Content-Type: text/plain

            -- list footer
            --mix--
            """
        )
    )
    assert message.plain_text == "The message.\n\n-- list footer"
    assert message.html is None
    assert message.parts == ()


def test_a_forwarded_message_body_is_not_the_body() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            See below.
            --mix
            Content-Type: message/rfc822

            Subject: inner
            Content-Type: text/html

            <p>Inner body.</p>
            --mix--
            """
        )
    )
    assert message.plain_text.strip() == "See below."
    assert message.html is None
    assert message.subject is None


def test_a_message_whose_only_content_is_forwarded_has_an_empty_body() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: message/rfc822

            Subject: inner

            Inner body.
            """
        )
    )
    assert message.plain_text == ""
    assert [(p.media_type, p.part_path) for p in message.parts] == [("message/rfc822", "1")]


def test_a_base64_text_body_is_decoded() -> None:
    message = normalize_message(
        raw(
            f"""
            Content-Type: text/plain; charset=utf-8
            Content-Transfer-Encoding: base64

            {b64("Grüße".encode())}
            """
        )
    )
    assert message.plain_text == "Grüße"


def test_control_characters_are_removed_exactly_as_the_character_class_says() -> None:
    import random

    from mailfathom.adapters.mime.text import _BODY_CONTROLS, clean_body_text

    def expected(text: str) -> str:
        return _BODY_CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))

    fixed = ["plain", "nul\x00here", "tab\tand\nline", "c1\x85", "é\x9f", "é\xa0", "del\x7f"]
    fixed += ["\ud800 lone surrogate", "crlf\r\nand\rcr", "漢字 and ü", "\x1b[31m escape"]
    for text in fixed:
        assert clean_body_text(text) == expected(text), repr(text)
    draw = random.Random(20261130)
    for _ in range(5000):
        text = "".join(
            chr(
                draw.choice(
                    [draw.randrange(0x00, 0x250), draw.randrange(0x80, 0xA0), draw.randrange(32)]
                )
            )
            for _ in range(draw.randrange(0, 24))
        )
        assert clean_body_text(text) == expected(text), repr(text)
