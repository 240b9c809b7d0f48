from __future__ import annotations

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.message import ContentMarker, PartKind

from .build import raw


def test_an_ordinary_message_has_no_markers() -> None:
    assert normalize_message(raw("Subject: x\n\nplain\n")).markers == frozenset()


def test_a_pgp_mime_message_is_encrypted_and_lists_no_parts() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary=e

            --e
            Content-Type: application/pgp-encrypted

            Version: 1
            --e
            Content-Type: application/octet-stream; name=encrypted.asc

            -----BEGIN PGP MESSAGE-----
            --e--
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.ENCRYPTED})
    assert message.parts == ()
    assert message.plain_text == ""


def test_an_smime_enveloped_message_is_encrypted() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name=smime.p7m
            Content-Transfer-Encoding: base64

            MIAGCSqGSIb3DQEHA6CAMIACAQAx
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.ENCRYPTED})
    assert message.parts == ()


def test_an_smime_object_without_smime_type_named_p7m_is_encrypted() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: application/x-pkcs7-mime; name="smime.p7m"
            Content-Disposition: attachment; filename="smime.p7m"

            data
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.ENCRYPTED})


def test_opaque_smime_signed_data_is_an_unverified_signature() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: application/pkcs7-mime; smime-type=signed-data; name=smime.p7m

            data
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.UNVERIFIED_SIGNATURE})


def test_a_multipart_signed_message_is_an_unverified_signature() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/signed; protocol="application/pkcs7-signature"; boundary=s

            --s
            Content-Type: multipart/mixed; boundary=m

            --m
            Content-Type: text/plain

            Signed text.
            --m
            Content-Type: application/pdf; name=contract.pdf

            PDF
            --m--
            --s
            Content-Type: application/pkcs7-signature; name=smime.p7s

            sig
            --s--
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.UNVERIFIED_SIGNATURE})
    assert message.plain_text.strip() == "Signed text."
    assert [(p.file_name, p.part_path) for p in message.parts] == [("contract.pdf", "1.2")]


def test_a_tnef_attachment_is_unexpanded_and_still_listed() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=m

            --m
            Content-Type: text/plain

            See attached.
            --m
            Content-Type: application/ms-tnef; name=winmail.dat

            TNEF
            --m--
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.UNEXPANDED_TNEF})
    assert [(p.kind, p.file_name) for p in message.parts] == [(PartKind.ATTACHMENT, "winmail.dat")]


def test_a_part_named_winmail_dat_is_unexpanded_tnef_whatever_its_type() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=m

            --m
            Content-Type: text/plain

            x
            --m
            Content-Type: application/octet-stream
            Content-Disposition: attachment; filename="WINMAIL.DAT"

            TNEF
            --m--
            """
        )
    )
    assert message.markers == frozenset({ContentMarker.UNEXPANDED_TNEF})


def test_markers_inside_a_forwarded_message_are_not_this_messages() -> None:
    message = normalize_message(
        raw(
            """
            Content-Type: multipart/mixed; boundary=m

            --m
            Content-Type: text/plain

            Forwarding an encrypted message.
            --m
            Content-Type: message/rfc822

            Content-Type: multipart/encrypted; boundary=e

            --e
            Content-Type: application/pgp-encrypted

            Version: 1
            --e--
            --m--
            """
        )
    )
    assert message.markers == frozenset()
