"""Files attached by reference (a PDF part of a real stored email, a file under an allowed
directory) travel through the composer, the outbox and the delivery pass to the test SMTP
server, and arrive as the same octets."""

from __future__ import annotations

import email
import email.policy
import os
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.app.files.references import attachment_reference
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from sending.helpers import AGENT, SendingDeployment, deliver_and_read, open_deployment, stored
from servers.smtp import SmtpServer

from .support import outbox_size, queue_with_files

CORPUS_PDF = "messages/parser-fixtures/flanker/tests/fixtures/messages/attached-pdf.eml"
LOCAL_NAME = "Zpráva č. 7 – výsledky.bin"
# Octets a text conversion would damage: bare CR and LF, NUL, every byte value.
LOCAL_BYTES = bytes(range(256)) * 40 + b"\r\n\n\r\x00end"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    from sending.helpers import SMTP_PASSWORD, SMTP_USER

    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    return allowed


def _open(
    tmp_path: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch, extra: str
) -> Iterator[SendingDeployment]:
    smtp.clear()
    register_all([LOCAL_NAME, "test.pdf", "friend@example.net", "Files attached"])
    yield from open_deployment(tmp_path, smtp, monkeypatch, mail_delivery=extra)


@pytest.fixture
def deployment(
    tmp_path: Path, root: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    yield from _open(tmp_path, smtp, monkeypatch, f'AttachmentRoots = ["{root}"]')


def _corpus_pdf(corpora: Path) -> tuple[bytes, bytes]:
    """The corpus message and its PDF's octets, as the standard library decodes them."""
    raw = (corpora / CORPUS_PDF).read_bytes()
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    (pdf,) = [p for p in parsed.iter_attachments() if p.get_content_type() == "application/pdf"]
    octets = pdf.get_payload(decode=True)
    assert isinstance(octets, bytes)
    assert octets.startswith(b"%PDF-")
    return raw, octets


def _pdf_part_id(d: SendingDeployment, email_id: str) -> str:
    read = d.services.reading().content.read(AGENT, ContentRequest(stored_email_ids=[email_id]))
    (entry,) = read.emails
    assert entry.content is not None
    (pdf,) = [a for a in entry.content.attachments if a.media_type == "application/pdf"]
    assert pdf.part_id is not None
    return pdf.part_id


def test_a_stored_pdf_and_an_allowed_file_arrive_byte_identical(
    deployment: SendingDeployment, smtp: SmtpServer, root: Path, corpora: Path
) -> None:
    raw, pdf_octets = _corpus_pdf(corpora)
    email_id = stored(deployment, raw)
    part_id = _pdf_part_id(deployment, email_id)
    local = root / LOCAL_NAME
    local.write_bytes(LOCAL_BYTES)

    files = deployment.services.files().attachments.resolve(
        AGENT,
        [
            attachment_reference(stored_email_id=email_id, part_id=part_id),
            attachment_reference(file_path=str(local)),
        ],
    )
    # Frozen when resolved: what the file holds afterwards does not travel.
    local.write_bytes(b"changed after resolving")
    queue_with_files(deployment, files)
    _, message = deliver_and_read(deployment.services, smtp)

    assert message.get_content_type() == "multipart/mixed"
    received = list(message.iter_attachments())
    assert [p.get_content_type() for p in received] == [
        "application/pdf",
        "application/octet-stream",
    ]
    assert [p.get_filename() for p in received] == ["test.pdf", LOCAL_NAME]
    assert [p["Content-Transfer-Encoding"] for p in received] == ["base64", "base64"]
    assert [p.get_payload(decode=True) for p in received] == [pdf_octets, LOCAL_BYTES]
    body = message.get_body(("plain",))
    assert body is not None
    assert "The files are attached." in str(body.get_content())
    # The non-ASCII name is written as an RFC 2231 parameter, the whole message 7-bit.
    (wire,) = smtp.received()
    assert b"filename*=utf-8''Zpr%C3%A1va" in wire.content.replace(b"\r\n ", b"")
    assert wire.content.isascii()


def test_a_given_name_and_type_replace_the_derived_ones(
    deployment: SendingDeployment, smtp: SmtpServer, root: Path
) -> None:
    (root / "report.txt").write_bytes(b"plain words\n")
    (root / "data").write_bytes(b"\x00\x01")
    files = deployment.services.files().attachments.resolve(
        AGENT,
        [
            attachment_reference(file_path=str(root / "report.txt")),
            attachment_reference(
                file_path=str(root / "data"), file_name="data.csv", media_type="Text/CSV"
            ),
        ],
    )
    assert [(f.file_name, f.media_type) for f in files] == [
        ("report.txt", "text/plain"),
        ("data.csv", "text/csv"),
    ]
    queue_with_files(deployment, files)
    _, message = deliver_and_read(deployment.services, smtp)
    received = list(message.iter_attachments())
    assert [p.get_payload(decode=True) for p in received] == [b"plain words\n", b"\x00\x01"]


@pytest.fixture
def small_messages(
    tmp_path: Path, root: Path, smtp: SmtpServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[SendingDeployment]:
    yield from _open(
        tmp_path, smtp, monkeypatch, f'AttachmentRoots = ["{root}"]\nMaxMessageSize = "64KiB"'
    )


def test_the_composed_message_bound_counts_the_files(
    small_messages: SendingDeployment, root: Path
) -> None:
    """60 000 octets are under every file bound, but base64 makes them about 81 000 in the
    message: more than MaxMessageSize, so nothing is queued."""
    (root / "big.bin").write_bytes(os.urandom(60_000))
    files = small_messages.services.files().attachments.resolve(
        AGENT, [attachment_reference(file_path=str(root / "big.bin"))]
    )
    with pytest.raises(Refusal) as refused:
        queue_with_files(small_messages, files)
    assert refused.value.code == Code.MESSAGE_TOO_LARGE
    assert outbox_size(small_messages) == 0
    # The same message without the file fits.
    queue_with_files(small_messages, ())
    assert outbox_size(small_messages) == 1
