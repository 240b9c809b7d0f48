"""Minting links on a content read and fetching with them, on a real store (SQLite and
PostgreSQL) with an injected clock: expiry, the account a link names, a file no longer
served, and stored content found missing (55001 and a repair request)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest
import sqlalchemy as sa

from downloads.keys import new_key_text
from log_audit import register_all
from mailfathom.adapters.download_links import SealedLinks
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.reading.views import AttachmentView, DownloadState
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.codes import Code
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    SecretRef,
    StoreConfig,
)
from mailfathom.domain.download_links import DownloadGrant, DownloadKey, DownloadsConfig
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole

READER = Caller(frozenset({Permission.MAIL_READ}), "reader")
ACCOUNT = "desk"
FILE = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3
START = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Opened:
    services: Services
    clock: Clock


def _mail() -> bytes:
    m = EmailMessage()
    m["From"] = "Frank Sender <frank@links.example>"
    m["To"] = "desk@links.example"
    m["Subject"] = "Plans for the new office"
    m["Date"] = format_datetime(START - timedelta(days=1))
    m["Message-ID"] = make_msgid(domain="links.example")
    m.set_content("The plan is attached.\n")
    m.add_attachment(FILE, maintype="image", subtype="png", filename="plan.png")
    register_all(["frank@links.example", "Frank Sender", "Plans for the new office", "plan.png"])
    return bytes(m)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def opened(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Opened]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    data = tmp_path / "data"
    cur = data / "local" / ACCOUNT / "INBOX" / "cur"
    cur.mkdir(parents=True)
    (cur / "1300000000.M1.links:2,S").write_bytes(_mail())
    variable = f"MF_LINK_KEY_{uuid.uuid4().hex[:8].upper()}"
    monkeypatch.setenv(variable, new_key_text())
    account = AccountConfig(
        ACCOUNT,
        "Desk",
        AccountKind.LOCAL,
        (FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
        addresses=("desk@links.example",),
    )
    config = DeploymentConfig(
        store=StoreConfig(data_dir=data, database_url=url),
        accounts=(account,),
        downloads=DownloadsConfig(
            public_base_url="https://files.links.example",
            link_lifetime_seconds=120,
            keys=(DownloadKey("k1", SecretRef(env=variable)),),
        ),
    )
    clock = Clock()
    with Services.open(config, clock=clock) as services:
        services.account_synchronizer().run_once(account)
        yield Opened(services, clock)


def _read(services: Services, *, links: bool = True) -> tuple[uuid.UUID, AttachmentView]:
    page = services.reading().timeline
    (summary,) = page.read(READER, TimelineRequest(selection=SelectionInput())).emails
    request = ContentRequest(
        stored_email_ids=[str(summary.stored_email_id)], include_attachment_download_links=links
    )
    (entry,) = services.reading().content.read(READER, request).emails
    assert entry.content is not None
    (attachment,) = entry.content.attachments
    return summary.stored_email_id, attachment


def _token(attachment: AttachmentView) -> str:
    assert attachment.download_url is not None
    return attachment.download_url.rsplit("/", 1)[1]


def _refused(services: Services, token: str) -> int:
    with pytest.raises(Refusal) as refused:
        services.download().fetch(token)
    return refused.value.code


def test_a_link_is_minted_per_attachment_and_fetches_it(opened: Opened) -> None:
    _, attachment = _read(opened.services)
    assert attachment.download_state is DownloadState.ISSUED
    assert attachment.download_expires_at == START + timedelta(seconds=120)
    assert attachment.download_url is not None
    assert attachment.download_url.startswith("https://files.links.example/downloads/k1.")
    found = opened.services.download().fetch(_token(attachment))
    assert (found.file_name, found.media_type, found.content) == ("plan.png", "image/png", FILE)


def test_without_asking_no_link_is_minted(opened: Opened) -> None:
    _, attachment = _read(opened.services, links=False)
    assert attachment.download_state is DownloadState.NOT_REQUESTED
    assert (attachment.download_url, attachment.download_expires_at) == (None, None)


def test_a_link_works_until_its_expiry_and_not_from_then_on(opened: Opened) -> None:
    _, attachment = _read(opened.services)
    token = _token(attachment)
    opened.clock.now = START + timedelta(seconds=119)
    assert opened.services.download().fetch(token).content == FILE
    opened.clock.now = START + timedelta(seconds=120)
    assert _refused(opened.services, token) == Code.DOWNLOAD_LINK_EXPIRED


def _ring(services: Services) -> SealedLinks:
    links = services.attachment_links()
    assert links is not None
    return links


def test_a_link_naming_another_account_fetches_nothing(opened: Opened) -> None:
    email_id, attachment = _read(opened.services)
    assert attachment.part_id is not None
    grant = DownloadGrant("elsewhere", email_id, attachment.part_id, START + timedelta(hours=1))
    token = _ring(opened.services).seal(grant)
    assert _refused(opened.services, token) == Code.DOWNLOAD_FILE_GONE


def test_missing_content_is_55001_with_a_repair_request(opened: Opened) -> None:
    services = opened.services
    email_id, attachment = _read(services)
    token = _token(attachment)
    found = services.content_repair.content_key_of(email_id)
    assert found is not None
    _account, seq, key = found
    assert key is not None
    services.content.discard(key)
    assert _refused(services, token) == Code.CONTENT_UNAVAILABLE
    with services.engine.connect() as c:
        requested = c.execute(
            sa.text("SELECT count(*) FROM repair_requests WHERE seq = :seq"), {"seq": seq}
        ).scalar_one()
    assert requested == 1


def test_a_deployment_without_links_recognizes_none(opened: Opened) -> None:
    _, attachment = _read(opened.services)
    bare = DeploymentConfig(store=opened.services.config.store, accounts=())
    with Services.open(bare, migrate_schema=False) as services:
        assert _refused(services, _token(attachment)) == Code.DOWNLOAD_LINK_NOT_RECOGNIZED
