"""get_email_content saving one attachment to a new file, over Streamable HTTP with the
official client, against mail synchronized from the test Dovecot."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path
from typing import Any

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal
from mcp_tests.client import call, code, structured, text
from mcp_tests.deployment import KEYS, Deployment

PDF = b"%PDF-1.4 test figures"
SUBJECT = "Quarterly report draft"


def _quarterly(d: Deployment) -> tuple[str, str]:
    """(storedEmailId, partId) of the PDF the fixture's quarterly report carries."""
    page = structured(call(d.url, KEYS["full"], "list_emails", {"pageSize": 100}))
    (email_id,) = [e["storedEmailId"] for e in page["emails"] if e["subject"] == SUBJECT]
    read = structured(
        call(d.url, KEYS["full"], "get_email_content", {"storedEmailIds": [email_id]})
    )
    (attachment,) = read["emails"][0]["content"]["attachments"]
    assert attachment["mediaType"] == "application/pdf"
    return email_id, attachment["partId"]


def _save(d: Deployment, key: str, email_id: str, part: str, to: str, **more: Any) -> Any:
    arguments = {"storedEmailIds": [email_id], "savePart": part, "saveTo": to, **more}
    return call(d.url, KEYS[key], "get_email_content", arguments)


def _fresh_name() -> str:
    name = f"saved-{uuid.uuid4().hex}.pdf"
    register_all([name])
    return name


def _listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_a_saved_part_holds_the_attachment_octets(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    email_id, part = _quarterly(d)
    target = d.files_dir / _fresh_name()
    result = structured(_save(d, "full", email_id, part, str(target)))
    assert result["savedFile"] == {
        "path": str(target),
        "mediaType": "application/pdf",
        "sizeBytes": len(PDF),
    }
    assert target.read_bytes() == PDF
    assert stat.S_IMODE(target.stat().st_mode) & 0o077 == 0
    # The read itself is answered as without saving.
    assert result["emails"][0]["content"]["headers"]["subject"] == SUBJECT
    # The path is in the answer, never in the server's log.
    assert target.name not in d.server_log.read_text("utf-8", "replace")


def test_an_existing_name_is_refused_and_left_as_it_was(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    email_id, part = _quarterly(d)
    existing = d.files_dir / _fresh_name()
    existing.write_bytes(b"already here")
    result = _save(d, "full", email_id, part, str(existing))
    assert code(result) == Code.FILE_ALREADY_EXISTS
    assert existing.name not in text(result)
    assert existing.read_bytes() == b"already here"


@pytest.mark.parametrize(
    "place",
    [
        "{outside}/{name}",
        "{root}/../outside/{name}",
        "{root}/escape/{name}",
        "{root}/no-such-directory/{name}",
        "{root}/dangling",
        "{root}",
        "relative/{name}",
    ],
)
def test_a_destination_outside_the_allowed_directory_is_refused_with_nothing_written(
    mcp_deployment: Deployment, place: str
) -> None:
    d = mcp_deployment
    email_id, part = _quarterly(d)
    outside = d.data_dir.parent / "outside"
    outside.mkdir(exist_ok=True)
    escape = d.files_dir / "escape"
    if not escape.is_symlink():
        escape.symlink_to(outside, target_is_directory=True)
    dangling = d.files_dir / "dangling"
    if not dangling.is_symlink():
        dangling.symlink_to(outside / "dangling-target")
    before = (_listing(d.files_dir), _listing(outside))
    name = _fresh_name()
    destination = place.format(root=d.files_dir, outside=outside, name=name)
    result = _save(d, "full", email_id, part, destination)
    expected = Code.FILE_ALREADY_EXISTS if place.endswith("dangling") else Code.FILE_NOT_SERVED
    assert code(result) == expected
    assert name not in text(result)
    assert str(d.files_dir) not in text(result)
    assert (_listing(d.files_dir), _listing(outside)) == before


def test_saving_needs_the_files_grant(mcp_deployment: Deployment) -> None:
    """A caller without the files grant is offered the read-only read, to which savePart and
    saveTo are unknown arguments (51017); the use case refuses such a save on its own too."""
    d = mcp_deployment
    email_id, part = _quarterly(d)
    target = d.files_dir / _fresh_name()
    saving = _save(d, "reader", email_id, part, str(target))
    assert code(saving) == Code.ARGUMENTS_NOT_MATCHING_SCHEMA
    assert not target.exists()
    # Reading alone is still served to the same caller, without a savedFile.
    plain = call(d.url, KEYS["reader"], "get_email_content", {"storedEmailIds": [email_id]})
    assert "savedFile" not in structured(plain)
    reader = Caller(frozenset({Permission.MAIL_READ}), "reader")
    request = ContentRequest(stored_email_ids=[email_id], save_part=part, save_to=str(target))
    with Services.open(load_config(d.config_path)) as services, pytest.raises(Refusal) as refused:
        services.reading().content.read(reader, request)
    assert refused.value.code == Code.FILES_NOT_ENABLED
    assert not target.exists()


@pytest.mark.parametrize(
    "arguments",
    [
        {"savePart": "2"},
        {"saveTo": "/x"},
        {"savePart": "two", "saveTo": "/x"},
    ],
)
def test_a_malformed_save_is_refused(mcp_deployment: Deployment, arguments: dict[str, str]) -> None:
    d = mcp_deployment
    email_id, _ = _quarterly(d)
    result = call(
        d.url, KEYS["full"], "get_email_content", {"storedEmailIds": [email_id], **arguments}
    )
    assert code(result) == Code.FILE_REQUEST_NOT_ACCEPTED


@pytest.mark.parametrize("name", ["report\u200b.pdf", "\u2060", "report\u202efdp.exe"])
def test_a_file_name_holding_a_character_that_renders_as_nothing_is_not_written(
    mcp_deployment: Deployment, name: str
) -> None:
    d = mcp_deployment
    email_id, part = _quarterly(d)
    before = _listing(d.files_dir)
    result = _save(d, "full", email_id, part, str(d.files_dir / name))
    assert code(result) == Code.FILE_REQUEST_NOT_ACCEPTED
    assert "renders as nothing" in text(result)
    assert name not in text(result)
    assert _listing(d.files_dir) == before


def test_a_save_names_one_email_and_one_of_its_attachments(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    email_id, part = _quarterly(d)
    target = str(d.files_dir / _fresh_name())
    page = structured(call(d.url, KEYS["full"], "list_emails", {"pageSize": 2}))
    two = [e["storedEmailId"] for e in page["emails"]]
    result = call(
        d.url,
        KEYS["full"],
        "get_email_content",
        {"storedEmailIds": two, "savePart": part, "saveTo": target},
    )
    assert code(result) == Code.FILE_REQUEST_NOT_ACCEPTED
    # Part 1 is the body, not an attachment the read describes.
    assert code(_save(d, "full", email_id, "1", target)) == Code.FILE_NOT_SERVED
    assert code(_save(d, "full", str(uuid.uuid4()), part, target)) == Code.EMAIL_NOT_HELD
    assert not Path(target).exists()
