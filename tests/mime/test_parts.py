from __future__ import annotations

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.message import PartDescription, PartKind

from .build import b64, raw

PDF = b"%PDF-1.4 fake document " * 40
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3


def test_an_attachment_is_described_with_name_type_size_and_path() -> None:
    message = normalize_message(
        raw(
            f"""
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            Report attached.
            --mix
            Content-Type: Application/PDF; name="ignored.pdf"
            Content-Disposition: attachment; filename="Q3 report.pdf"
            Content-Transfer-Encoding: base64

            {b64(PDF)}
            --mix--
            """
        )
    )
    assert message.parts == (
        PartDescription(
            kind=PartKind.ATTACHMENT,
            file_name="Q3 report.pdf",
            name_was_normalized=False,
            media_type="application/pdf",
            size_octets=len(PDF),
            part_path="2",
            content_id=None,
        ),
    )
    assert message.attachment_count == 1
    assert message.inline_resource_count == 0
    assert message.plain_text.strip() == "Report attached."


def test_a_quoted_printable_attachment_size_is_its_decoded_size() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            x
            --mix
            Content-Type: text/csv; name=data.csv
            Content-Transfer-Encoding: quoted-printable

            a=3Db=
            ,c
            --mix--
            """
        )
    )
    (part,) = message.parts
    # The line break before a boundary belongs to the boundary (RFC 2046 section 5.1.1).
    assert part.size_octets == len(b"a=b,c")
    assert part.media_type == "text/csv"


def test_a_text_part_marked_as_attachment_is_an_attachment() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            Body.
            --mix
            Content-Type: text/plain
            Content-Disposition: attachment

            notes
            --mix
            Content-Type: text/html; name=page.html

            <p>saved page</p>
            --mix--
            """
        )
    )
    assert [(p.kind, p.file_name, p.part_path) for p in message.parts] == [
        (PartKind.ATTACHMENT, None, "2"),
        (PartKind.ATTACHMENT, "page.html", "3"),
    ]
    assert message.html is None
    assert message.plain_text.strip() == "Body."


def test_an_unnamed_binary_leaf_is_an_attachment() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            Body.
            --mix
            Content-Type: application/octet-stream

            data
            --mix--
            """
        )
    )
    assert [(p.kind, p.file_name) for p in message.parts] == [(PartKind.ATTACHMENT, None)]


def test_an_image_referenced_from_the_html_is_inline() -> None:
    message = normalize_message(
        raw(
            f"""
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/html

            <p>Logo: <img src="cid:logo%40example.com"></p>
            --mix
            Content-Type: image/png; name=logo.png
            Content-Disposition: inline; filename=logo.png
            Content-ID: <logo@example.com>
            Content-Transfer-Encoding: base64

            {b64(PNG)}
            --mix
            Content-Type: image/png; name=photo.png
            Content-Disposition: inline; filename=photo.png
            Content-ID: <photo@example.com>
            Content-Transfer-Encoding: base64

            {b64(PNG)}
            --mix--
            """
        )
    )
    assert [(p.kind, p.file_name, p.content_id) for p in message.parts] == [
        (PartKind.INLINE, "logo.png", "logo@example.com"),
        (PartKind.ATTACHMENT, "photo.png", "photo@example.com"),
    ]
    assert message.inline_resource_count == 1
    assert message.attachment_count == 1
    assert message.parts[0].size_octets == len(PNG)


def test_an_image_of_a_related_html_body_is_inline_even_unreferenced() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/related; boundary=rel

            --rel
            Content-Type: text/html

            <p>no references here</p>
            --rel
            Content-Type: image/gif
            Content-ID: <spacer>

            GIF89a
            --rel
            Content-Type: application/pdf; name=terms.pdf

            PDF
            --rel--
            """
        )
    )
    assert [(p.kind, p.media_type, p.part_path) for p in message.parts] == [
        (PartKind.INLINE, "image/gif", "2"),
        (PartKind.ATTACHMENT, "application/pdf", "3"),
    ]


def test_the_related_start_parameter_chooses_the_root() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/related; boundary=rel; start="<root@x>"

            --rel
            Content-Type: image/png
            Content-ID: <img@x>

            PNG
            --rel
            Content-Type: text/html
            Content-ID: <root@x>

            <img src="cid:img@x"> Root text
            --rel--
            """
        )
    )
    assert message.plain_text.strip() == "Root text"
    assert [(p.kind, p.part_path) for p in message.parts] == [(PartKind.INLINE, "1")]


def test_an_attached_message_is_one_attachment() -> None:
    inner = "Subject: inner\nContent-Type: text/plain\n\nInner text.\n"
    message = normalize_message(
        raw(
            f"""
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            Forwarding.
            --mix
            Content-Type: message/rfc822
            Content-Disposition: attachment; filename=original.eml

            {inner.replace(chr(10), chr(10) + " " * 12)}
            --mix--
            """
        )
    )
    (part,) = message.parts
    assert part.kind is PartKind.ATTACHMENT
    assert part.media_type == "message/rfc822"
    assert part.file_name == "original.eml"
    assert part.part_path == "2"
    assert abs(part.size_octets - len(inner.replace("\n", "\r\n"))) <= 4


def test_part_paths_follow_imap_section_numbers() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=a

            --a
            Content-Type: multipart/alternative; boundary=b

            --b
            Content-Type: text/plain

            text
            --b
            Content-Type: multipart/related; boundary=c

            --c
            Content-Type: text/html

            <img src="cid:i1">
            --c
            Content-Type: image/png
            Content-ID: <i1>

            PNG
            --c--
            --b--
            --a
            Content-Type: application/zip; name=one.zip

            ZIP
            --a
            Content-Type: multipart/mixed; boundary=d

            --d
            Content-Type: image/jpeg; name=two.jpg

            JPG
            --d--
            --a--
            """
        )
    )
    assert [(p.part_path, p.kind) for p in message.parts] == [
        ("1.2.2", PartKind.INLINE),
        ("2", PartKind.ATTACHMENT),
        ("3.1", PartKind.ATTACHMENT),
    ]


def test_a_single_part_non_text_message_is_part_one() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: application/pdf; name=scan.pdf
            Content-Transfer-Encoding: base64

            JVBERi0=
            """
        )
    )
    assert [(p.part_path, p.file_name, p.size_octets) for p in message.parts] == [
        ("1", "scan.pdf", 5)
    ]
    assert message.plain_text == ""


def test_file_names_are_decoded_and_normalized() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            x
            --mix
            Content-Type: application/octet-stream
            Content-Disposition: attachment; filename*=UTF-8''%E2%80%AEfdp.exe

            a
            --mix
            Content-Type: application/octet-stream; name="=?utf-8?q?r=C3=A9sum=C3=A9.pdf?="

            b
            --mix
            Content-Type: application/octet-stream
            Content-Disposition: attachment; filename="../../etc/passwd"

            c
            --mix
            Content-Type: application/octet-stream
            Content-Disposition: attachment; filename=".."

            d
            --mix--
            """
        )
    )
    assert [(p.file_name, p.name_was_normalized) for p in message.parts] == [
        ("fdp.exe", True),
        ("résumé.pdf", False),
        ("passwd", True),
        (None, True),
    ]


def test_rfc2231_continuations_are_joined() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=mix

            --mix
            Content-Type: text/plain

            x
            --mix
            Content-Type: application/pdf
            Content-Disposition: attachment;
             filename*0*=utf-8''very%20long%20;
             filename*1*=name.pdf

            a
            --mix--
            """
        )
    )
    assert message.parts[0].file_name == "very long name.pdf"


def test_a_pgp_signature_part_is_not_an_attachment() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/signed; protocol="application/pgp-signature"; boundary=s

            --s
            Content-Type: text/plain

            Signed words.
            --s
            Content-Type: application/pgp-signature; name=signature.asc

            -----BEGIN PGP SIGNATURE-----
            --s--
            """
        )
    )
    assert message.plain_text.strip() == "Signed words."
    assert message.parts == ()


def test_a_referenced_image_of_a_related_body_is_inline_even_if_marked_attachment() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/related; boundary=rel

            --rel
            Content-Type: text/html

            <img src="CID:Chart@Example">
            --rel
            Content-Type: image/png; name=chart.png
            Content-Disposition: attachment; filename=chart.png
            Content-ID: <chart@example>

            PNG
            --rel--
            """
        )
    )
    assert [(p.kind, p.file_name) for p in message.parts] == [(PartKind.INLINE, "chart.png")]
