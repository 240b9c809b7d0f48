"""What resolving a file to attach refuses, and that a refusal reads nothing outside the
allowed directory and nothing past a bound: every `os.read` the resolver makes is counted,
and the directory and the outbox are left as they were."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from mailfathom.app.files.references import AttachmentReference, attachment_reference
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from sending.helpers import AGENT, SendingDeployment, open_deployment, stored

from .support import outbox_size, tree

SECRET = b"outside the allowed directory\n"


class ReadCount:
    """Octets read through `os.read` while installed."""

    def __init__(self) -> None:
        self.octets = 0


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> ReadCount:
    count = ReadCount()
    real = os.read

    def counted(descriptor: int, length: int) -> bytes:
        data = real(descriptor, length)
        count.octets += len(data)
        return data

    monkeypatch.setattr(os, "read", counted)
    return count


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """(allowed, outside): a secret outside, and links inside pointing at it."""
    allowed = tmp_path / "allowed"
    outside = tmp_path / "outside"
    (allowed / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (allowed / "sub" / "ok.txt").write_bytes(b"inside\n")
    (allowed / "link.txt").symlink_to(outside / "secret.txt")
    (allowed / "linked-dir").symlink_to(outside, target_is_directory=True)
    (allowed / "zero").symlink_to("/dev/zero")
    os.mkfifo(allowed / "pipe")
    return allowed, outside


def _deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, allowed: Path, bounds: str = ""
) -> Iterator[SendingDeployment]:
    extra = f'AttachmentRoots = ["{allowed}"]\n{bounds}'
    yield from open_deployment(tmp_path, None, monkeypatch, mail_delivery=extra)


@pytest.fixture
def deployment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: tuple[Path, Path]
) -> Iterator[SendingDeployment]:
    bounds = "MaxAttachmentCount = 2\nMaxAttachmentSize = 1000\nMaxTotalAttachmentSize = 1500"
    yield from _deployment(tmp_path, monkeypatch, layout[0], bounds)


def _refused(
    d: SendingDeployment, references: Sequence[AttachmentReference], caller: Caller = AGENT
) -> int:
    before = tree(d.services.config.store.data_dir.parent)
    with pytest.raises(Refusal) as refused:
        d.services.files().attachments.resolve(caller, references)
    assert tree(d.services.config.store.data_dir.parent) == before
    assert outbox_size(d) == 0
    return refused.value.code


def _path(text: str) -> AttachmentReference:
    return attachment_reference(file_path=text)


@pytest.mark.parametrize(
    "written",
    [
        "{outside}/secret.txt",
        "{allowed}/../outside/secret.txt",
        "{allowed}/sub/../../outside/secret.txt",
        "{allowed}/./sub/ok.txt",
        "{allowed}/link.txt",
        "{allowed}/linked-dir/secret.txt",
        "{allowed}/zero",
        "{allowed}/pipe",
        "{allowed}/sub",
        "{allowed}/missing.txt",
        "{allowed}",
        "{allowed}x/secret.txt",
        "/dev/zero",
        "relative/path.txt",
    ],
)
def test_a_path_outside_reached_through_a_link_or_not_a_regular_file_is_one_answer(
    deployment: SendingDeployment,
    layout: tuple[Path, Path],
    reads: ReadCount,
    written: str,
) -> None:
    allowed, outside = layout
    path = written.format(allowed=allowed, outside=outside)
    assert _refused(deployment, [_path(path)]) == Code.FILE_NOT_SERVED
    assert reads.octets == 0


def test_a_fifo_is_refused_without_waiting_for_a_writer(
    deployment: SendingDeployment, layout: tuple[Path, Path]
) -> None:
    codes: list[int] = []

    def attempt() -> None:
        codes.append(_refused(deployment, [_path(str(layout[0] / "pipe"))]))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "resolving a FIFO blocked"
    assert codes == [Code.FILE_NOT_SERVED]


def test_the_refusal_names_neither_the_path_nor_the_name(
    deployment: SendingDeployment, layout: tuple[Path, Path]
) -> None:
    path = layout[0] / "linked-dir" / "secret.txt"
    with pytest.raises(Refusal) as refused:
        deployment.services.files().attachments.resolve(AGENT, [_path(str(path))])
    text = str(refused.value)
    assert "secret" not in text
    assert str(layout[0]) not in text


def test_a_file_inside_is_read(deployment: SendingDeployment, layout: tuple[Path, Path]) -> None:
    (file,) = deployment.services.files().attachments.resolve(
        AGENT, [_path(str(layout[0] / "sub" / "ok.txt"))]
    )
    assert (file.file_name, file.media_type, file.content) == ("ok.txt", "text/plain", b"inside\n")


def test_an_oversized_file_is_refused_before_a_byte_is_read(
    deployment: SendingDeployment, layout: tuple[Path, Path], reads: ReadCount
) -> None:
    (layout[0] / "big.bin").write_bytes(b"x" * 1001)
    assert _refused(deployment, [_path(str(layout[0] / "big.bin"))]) == Code.MESSAGE_TOO_LARGE
    assert reads.octets == 0


def test_too_many_files_are_refused_before_anything_is_opened(
    deployment: SendingDeployment, layout: tuple[Path, Path], reads: ReadCount
) -> None:
    ok = _path(str(layout[0] / "sub" / "ok.txt"))
    assert _refused(deployment, [ok, ok, ok]) == Code.MESSAGE_TOO_LARGE
    assert reads.octets == 0


def test_too_large_a_total_stops_at_the_file_that_passes_it(
    deployment: SendingDeployment, layout: tuple[Path, Path], reads: ReadCount
) -> None:
    for name in ("a.bin", "b.bin"):
        (layout[0] / name).write_bytes(b"y" * 900)
    references = [_path(str(layout[0] / "a.bin")), _path(str(layout[0] / "b.bin"))]
    assert _refused(deployment, references) == Code.MESSAGE_TOO_LARGE
    # The first file whole, nothing of the second (its size alone passes what is left).
    assert reads.octets == 900


def test_a_file_larger_than_it_says_is_read_one_octet_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: ReadCount
) -> None:
    """A procfs file reports size 0 and holds more: reading stops at the bound plus one."""
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    assert len(status.read_bytes()) > 200
    for d in _deployment(tmp_path, monkeypatch, Path("/proc/self"), "MaxAttachmentSize = 100"):
        assert _refused(d, [_path(str(status))]) == Code.MESSAGE_TOO_LARGE
    assert reads.octets == 101


def test_no_allowed_directory_attaches_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: ReadCount
) -> None:
    (tmp_path / "a.txt").write_bytes(b"a")
    for d in open_deployment(tmp_path, None, monkeypatch):
        assert _refused(d, [_path(str(tmp_path / "a.txt"))]) == Code.FILES_NOT_ENABLED
    assert reads.octets == 0


def _stored_pdf(d: SendingDeployment) -> tuple[str, str]:
    from email.message import EmailMessage

    m = EmailMessage()
    m["From"] = "alice@example.net"
    m["To"] = "me@example.org"
    m["Subject"] = "Stored file"
    m.set_content("See the file.")
    m.add_attachment(b"%PDF-1.4 small", maintype="application", subtype="pdf", filename="s.pdf")
    email_id = stored(d, bytes(m))
    read = d.services.reading().content.read(AGENT, ContentRequest(stored_email_ids=[email_id]))
    content = read.emails[0].content
    assert content is not None
    assert content.attachments[0].part_id is not None
    return email_id, content.attachments[0].part_id


@pytest.mark.parametrize(
    ("name", "choose", "expected"),
    [
        ("a part the email does not carry", lambda e, p: (e, "9"), Code.FILE_NOT_SERVED),
        ("its body rather than a file", lambda e, p: (e, "1"), Code.FILE_NOT_SERVED),
        ("an email nobody holds", lambda e, p: (str(uuid.uuid4()), p), Code.EMAIL_NOT_HELD),
    ],
)
def test_a_stored_part_must_be_a_file_of_an_email_held(
    deployment: SendingDeployment,
    name: str,
    choose: Callable[[str, str], tuple[str, str]],
    expected: int,
) -> None:
    email_id, part_id = _stored_pdf(deployment)
    chosen_email, chosen_part = choose(email_id, part_id)
    reference = attachment_reference(stored_email_id=chosen_email, part_id=chosen_part)
    assert _refused(deployment, [reference]) == expected, name


def test_a_stored_part_needs_the_grant_a_content_read_needs(
    deployment: SendingDeployment,
) -> None:
    email_id, part_id = _stored_pdf(deployment)
    sender_only = Caller(permissions=frozenset({Permission.SEND}), label="agent")
    reference = attachment_reference(stored_email_id=email_id, part_id=part_id)
    assert _refused(deployment, [reference], sender_only) == Code.EMAIL_NOT_HELD
    (file,) = deployment.services.files().attachments.resolve(AGENT, [reference])
    assert (file.file_name, file.media_type, file.content) == (
        "s.pdf",
        "application/pdf",
        b"%PDF-1.4 small",
    )


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"file_path": "/a", "part_id": "2"},
        {"stored_email_id": str(uuid.uuid4())},
        {"stored_email_id": str(uuid.uuid4()), "part_id": "1..2"},
        {"file_path": "/a", "file_name": "line\nbreak"},
        {"file_path": "/a", "file_name": "a/b"},
        {"file_path": "/a", "file_name": "shed\u200b.pdf"},
        {"file_path": "/a", "file_name": "\u2060"},
        {"file_path": "/a", "file_name": "plan\u202egpj.exe"},
        # No fileName: the path's last component is the name the file travels under.
        {"file_path": "/a/sh\u200bed.pdf"},
        {"file_path": "/a", "media_type": "pdf"},
        {"file_path": "/a\x00b"},
        {"file_path": "/" + "a" * 4096},
    ],
)
def test_a_malformed_reference_is_refused_before_anything_is_looked_up(
    arguments: dict[str, str],
) -> None:
    with pytest.raises(Refusal) as refused:
        attachment_reference(**arguments)
    assert refused.value.code == Code.FILE_REQUEST_NOT_ACCEPTED


def test_only_the_name_a_file_travels_under_is_held_to_the_name_rule() -> None:
    """A directory of the path is no name anybody is shown; a fileName given names the file
    instead of the path's last component."""
    inside = attachment_reference(file_path="/a/sh\u200bed/plan.pdf")
    assert inside.file_name is None
    named = attachment_reference(file_path="/a/sh\u200bed.pdf", file_name="shed.pdf")
    assert named.file_name == "shed.pdf"
