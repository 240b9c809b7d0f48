"""Attachment download links over `mailfathom serve`: get_email_content with
includeAttachmentDownloadLinks through the official MCP client, then a plain GET of each link,
against mail synchronized from the test Dovecot."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

import httpx2
import pytest

from downloads.keys import new_key_text
from log_audit import register, register_all
from mailfathom.adapters.download_links import RingKey, SealedLinks, decode_key
from mailfathom.domain.codes import Code
from mailfathom.domain.download_links import DownloadGrant
from mcp_tests.client import call, structured
from mcp_tests.deployment import KEYS, Deployment, _free_port, deploy
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox

SUBJECT = "Files for the download checks"
PDF = b"%PDF-1.4 " + bytes(range(256)) * 4
# A page a browser would run if it rendered it: it must arrive as a file to save.
PAGE = b"<html><body><script>document.title='ran'</script>figures</body></html>"
# Large enough to cross several transport chunks.
ARCHIVE = os.urandom(600_000)
NAMES = {
    "report.pdf": ("application", "pdf", PDF),
    "page.html": ("text", "html", PAGE),
    "Přehled výdajů.zip": ("application", "zip", ARCHIVE),
}
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
}


@dataclass(frozen=True)
class Linked:
    deployment: Deployment
    base_url: str
    signing: RingKey
    older: RingKey


def _files_mail() -> bytes:
    m = EmailMessage()
    m["From"] = "Erin Files <erin@example.org>"
    m["To"] = "owner@example.net"
    m["Subject"] = SUBJECT
    m["Date"] = format_datetime(datetime(2026, 5, 2, 9, 0, tzinfo=UTC))
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    m.set_content("Three files are attached.\n")
    for name, (maintype, subtype, data) in NAMES.items():
        m.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    register(SUBJECT, "erin@example.org", "Erin Files", "Three files are attached")
    register_all(NAMES)
    return bytes(m)


@pytest.fixture(scope="module")
def linked(dovecot: DovecotServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Linked]:
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    keys_dir = tmp_path_factory.mktemp("download-keys")
    signing_text, older_text = new_key_text(), new_key_text()
    older_file = keys_dir / "older.key"
    older_file.write_text(older_text + "\n", "utf-8")
    older_file.chmod(0o600)
    variable = f"MF_DOWNLOAD_KEY_{uuid.uuid4().hex[:8].upper()}"
    os.environ[variable] = signing_text

    def downloads(_account: ImapAccount, _secret_env: str) -> str:
        return f"""
[Downloads]
PublicBaseUrl = "{base_url}"

[[Downloads.Keys]]
Id = "2026-b"
Secret = {{ Env = "{variable}" }}

[[Downloads.Keys]]
Id = "2026-a"
Secret = {{ File = "{older_file}" }}
"""

    def more_mail(mailbox: RemoteMailbox) -> None:
        mailbox.append(_files_mail())

    served = deploy(
        dovecot, tmp_path_factory, more_config=downloads, more_mail=more_mail, port=port
    )
    try:
        for deployment in served:
            yield Linked(
                deployment,
                base_url,
                RingKey("2026-b", decode_key(signing_text)),
                RingKey("2026-a", decode_key(older_text)),
            )
    finally:
        os.environ.pop(variable, None)


def _email_id(d: Deployment, subject: str) -> str:
    page = structured(call(d.url, KEYS["full"], "list_emails", {"pageSize": 100}))
    (email_id,) = [e["storedEmailId"] for e in page["emails"] if e["subject"] == subject]
    return str(email_id)


def _attachments(d: Deployment, email_id: str, **arguments: Any) -> list[dict[str, Any]]:
    read = structured(
        call(
            d.url, KEYS["reader"], "get_email_content", {"storedEmailIds": [email_id], **arguments}
        )
    )
    return list(read["emails"][0]["content"]["attachments"])


def _issued(linked: Linked) -> tuple[str, dict[str, dict[str, Any]]]:
    d = linked.deployment
    email_id = _email_id(d, SUBJECT)
    attachments = _attachments(d, email_id, includeAttachmentDownloadLinks=True)
    for a in attachments:
        register(a["downloadUrl"])
    return email_id, {a["fileName"]: a for a in attachments}


def _get(url: str, method: str = "GET") -> httpx2.Response:
    with httpx2.Client(timeout=30) as client:
        return client.request(method, url)


def _refusal_code(response: httpx2.Response) -> int:
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"code", "message"}
    return int(body["code"])


def test_each_link_returns_its_file_byte_for_byte(linked: Linked) -> None:
    _, by_name = _issued(linked)
    assert set(by_name) == set(NAMES)
    before = datetime.now(UTC)
    for name, (maintype, subtype, data) in NAMES.items():
        attachment = by_name[name]
        assert attachment["downloadState"] == "issued"
        url = attachment["downloadUrl"]
        assert url.startswith(linked.base_url + "/downloads/")
        expires = datetime.fromisoformat(attachment["downloadExpiresAt"])
        assert before + timedelta(minutes=9) < expires <= before + timedelta(minutes=10, seconds=1)
        response = _get(url)
        assert response.status_code == 200
        assert response.content == data
        assert response.headers["content-type"] == f"{maintype}/{subtype}"
        for header, value in SECURITY_HEADERS.items():
            assert response.headers[header] == value
        assert "sandbox" in response.headers["content-security-policy"]
        assert response.headers["content-disposition"].startswith("attachment")


def test_a_file_name_travels_as_an_ascii_fallback_and_in_utf8(linked: Linked) -> None:
    _, by_name = _issued(linked)
    plain = _get(by_name["report.pdf"]["downloadUrl"])
    assert plain.headers["content-disposition"] == 'attachment; filename="report.pdf"'
    accented = _get(by_name["Přehled výdajů.zip"]["downloadUrl"])
    assert accented.headers["content-disposition"] == (
        'attachment; filename="P_ehled v_daj_.zip"; '
        "filename*=utf-8''P%C5%99ehled%20v%C3%BDdaj%C5%AF.zip"
    )


def test_an_html_file_is_served_as_a_download_never_as_a_page(linked: Linked) -> None:
    _, by_name = _issued(linked)
    response = _get(by_name["page.html"]["downloadUrl"])
    assert response.content == PAGE
    assert response.headers["content-type"] == "text/html"
    assert response.headers["content-disposition"] == 'attachment; filename="page.html"'
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in response.headers["content-security-policy"]


def test_head_answers_the_headers_without_the_file(linked: Linked) -> None:
    _, by_name = _issued(linked)
    response = _get(by_name["report.pdf"]["downloadUrl"], "HEAD")
    assert response.status_code == 200
    assert response.content == b""
    assert response.headers["content-length"] == str(len(PDF))


def test_a_link_reveals_no_identifier_of_the_mail_it_fetches(linked: Linked) -> None:
    email_id, by_name = _issued(linked)
    for attachment in by_name.values():
        url = attachment["downloadUrl"]
        token = url.rsplit("/", 1)[1]
        sealed = token.split(".", 1)[1]
        for identifier in (email_id, uuid.UUID(email_id).hex, "2026-05-02"):
            assert identifier not in sealed


def _sealed(linked: Linked, grant: DownloadGrant, key: RingKey | None = None) -> str:
    return SealedLinks(linked.base_url, [key or linked.signing]).issue(grant)


def _grant(email_id: str, part: str, *, account: str = "work", minutes: int = 5) -> DownloadGrant:
    expires = datetime.now(UTC) + timedelta(minutes=minutes)
    return DownloadGrant(account, uuid.UUID(email_id), part, expires)


def test_a_link_sealed_under_the_older_key_still_in_the_ring_is_served(linked: Linked) -> None:
    email_id, by_name = _issued(linked)
    part = by_name["report.pdf"]["partId"]
    response = _get(_sealed(linked, _grant(email_id, part), linked.older))
    assert response.status_code == 200
    assert response.content == PDF


def _refusals(linked: Linked) -> list[tuple[str, str, int, int]]:
    """(what, link, expected status, expected code) for every refusal the route makes."""
    email_id, by_name = _issued(linked)
    issued = by_name["report.pdf"]["downloadUrl"]
    part = by_name["report.pdf"]["partId"]
    base, token = issued.rsplit("/", 1)
    key_id, sealed = token.split(".", 1)
    flipped = sealed[:10] + ("A" if sealed[10] != "A" else "B") + sealed[11:]
    removed = RingKey("2025-z", decode_key(new_key_text()))
    stranger = RingKey(linked.signing.key_id, decode_key(new_key_text()))
    return [
        ("altered", f"{base}/{key_id}.{flipped}", 404, Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("truncated", f"{base}/{key_id}.{sealed[:-4]}", 404, Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("no key id", f"{base}/{sealed}", 404, Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("nothing", f"{base}/", 404, Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("oversized", f"{base}/{key_id}.{'A' * 2000}", 404, Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("foreign key", _sealed(linked, _grant(email_id, part), stranger), 404,
         Code.DOWNLOAD_LINK_NOT_RECOGNIZED),
        ("expired", _sealed(linked, _grant(email_id, part, minutes=-1)), 410,
         Code.DOWNLOAD_LINK_EXPIRED),
        ("key removed", _sealed(linked, _grant(email_id, part), removed), 410,
         Code.DOWNLOAD_LINK_KEY_RETIRED),
        ("other account", _sealed(linked, _grant(email_id, part, account="other")), 404,
         Code.DOWNLOAD_FILE_GONE),
        ("body part", _sealed(linked, _grant(email_id, "1")), 404, Code.DOWNLOAD_FILE_GONE),
        ("no such part", _sealed(linked, _grant(email_id, "9")), 404, Code.DOWNLOAD_FILE_GONE),
        ("no such email", _sealed(linked, _grant(str(uuid.uuid4()), part)), 404,
         Code.DOWNLOAD_FILE_GONE),
    ]  # fmt: skip


def test_every_link_that_grants_nothing_is_refused_with_its_code(linked: Linked) -> None:
    d = linked.deployment
    refusals = _refusals(linked)
    register_all(url.rsplit("/", 1)[1] for _, url, _, _ in refusals)
    for what, url, status, expected in refusals:
        response = _get(url)
        assert (what, response.status_code, _refusal_code(response)) == (what, status, expected)
        assert response.headers["cache-control"] == "no-store"
        for word in ("work", "report", "pdf", SUBJECT):
            assert word not in response.text, what
    log = d.server_log.read_text("utf-8", "replace")
    for _, url, _, _ in refusals:
        token = url.rsplit("/", 1)[1]
        assert not token or token not in log
    # What is logged of a refusal is its code, and nothing else.
    logged = [json.loads(line) for line in log.splitlines() if '"download.refused"' in line]
    assert {entry["code"] for entry in logged} == {int(e) for _, _, _, e in refusals}
    assert all(set(entry) == {"code", "event", "level", "timestamp"} for entry in logged)


def test_no_link_is_written_to_the_server_log(linked: Linked) -> None:
    _, by_name = _issued(linked)
    for attachment in by_name.values():
        assert _get(attachment["downloadUrl"]).status_code == 200
    log = linked.deployment.server_log.read_text("utf-8", "replace")
    for attachment in by_name.values():
        token = attachment["downloadUrl"].rsplit("/", 1)[1]
        assert token not in log
        assert attachment["downloadUrl"] not in log


def test_without_download_settings_links_are_unavailable(mcp_deployment: Deployment) -> None:
    d = mcp_deployment
    email_id = _email_id(d, "Quarterly report draft")
    (asked,) = _attachments(d, email_id, includeAttachmentDownloadLinks=True)
    assert asked["downloadState"] == "unavailable"
    assert asked["downloadUrl"] is None
    assert asked["downloadExpiresAt"] is None
    (unasked,) = _attachments(d, email_id)
    assert unasked["downloadState"] == "notRequested"
    assert unasked["downloadUrl"] is None
    origin = d.url.removesuffix("/mcp")
    response = _get(f"{origin}/downloads/2026-b.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
    assert (response.status_code, _refusal_code(response)) == (
        404,
        Code.DOWNLOAD_LINK_NOT_RECOGNIZED,
    )


def test_links_are_not_requested_unless_asked(linked: Linked) -> None:
    d = linked.deployment
    email_id = _email_id(d, SUBJECT)
    for attachment in _attachments(d, email_id):
        assert attachment["downloadState"] == "notRequested"
        assert attachment["downloadUrl"] is None
        assert attachment["downloadExpiresAt"] is None
