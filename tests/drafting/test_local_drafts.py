"""Drafts of a local account: the copy is written into the account's own Maildir drafts
folder, an answer is derived again from the stored email on every edit, and a forward carries
the original's files into the draft and on to the recipient."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.drafting.composition import DraftRequest
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.drafts import CopyState, DeleteOutcome
from peer_copies import as_sent

from .helpers import AGENT

FRIEND = "friend@example.org"
PDF = b"%PDF-1.4 the planting plan\n" * 20
PEOPLE = ["olga@example.net", "carol@example.net", "Olga Writer", FRIEND, "me@example.org"]


def _config(root: Path) -> Path:
    text = f"""
[Store]
DataDir = "{root / "data"}"

[[Accounts]]
Id = "home"
DisplayName = "Home"
Kind = "local"
Addresses = ["me@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Drafts"
Role = "Drafts"

[[Accounts.Folders]]
Remote = "Sent"
Role = "Sent"

[Accounts.Delivery]
Enabled = true
Address = "me@example.org"

[[Accounts]]
Id = "friend"
DisplayName = "Friend"
Kind = "local"
Addresses = ["{FRIEND}"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"
"""
    path = root / "mailfathom.toml"
    path.write_text(text, "utf-8")
    return path


def _original(subject: str, message_id: str) -> bytes:
    register_all([subject, *PEOPLE])
    m = EmailMessage()
    m["From"] = "Olga Writer <olga@example.net>"
    m["To"] = "me@example.org, carol@example.net"
    m["Subject"] = subject
    m["Message-ID"] = message_id
    m["References"] = "<root-1@example.net>"
    m["In-Reply-To"] = "<root-1@example.net>"
    m.set_content("Here is the planting plan.\n")
    m.add_attachment(PDF, maintype="application", subtype="pdf", filename="plan.pdf")
    return bytes(m)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    with Services.open(load_config(_config(tmp_path))) as opened:
        yield opened


def _store(services: Services, raw: bytes) -> str:
    services.connectors.local.folder("home", "INBOX").deliver(raw)
    account = services.config.account("home")
    assert account is not None
    services.account_synchronizer().run_once(account)
    page = services.reading().timeline.read(
        AGENT, TimelineRequest(selection=SelectionInput(accounts=["home"], folders=["INBOX"]))
    )
    return str(page.emails[0].stored_email_id)


def _drafts_folder(services: Services, account: str = "home") -> list[Path]:
    _, paths = services.connectors.local.folder(account, "Drafts").scan()
    return sorted(paths.values())


def _parsed(path: Path) -> EmailMessage:
    parsed = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    assert isinstance(parsed, EmailMessage)
    return parsed


def test_an_answer_is_derived_again_on_every_edit_into_the_local_drafts_folder(
    services: Services,
) -> None:
    first = _store(services, _original("Planting plan", "<plan-1@example.net>"))
    uses = services.drafting()
    saved = uses.save.save(
        AGENT,
        DraftRequest(
            plain_text_body="Looks good.", answered_email_id=first, answering="senderOnly"
        ),
    )
    assert saved.state is CopyState.FILED
    (path,) = _drafts_folder(services)
    assert path.name.endswith(":2,D")
    draft = _parsed(path)
    assert draft["Subject"] == "Re: Planting plan"
    assert draft["To"] == "olga@example.net"
    assert draft["In-Reply-To"] == "<plan-1@example.net>"
    assert draft["References"] == "<root-1@example.net> <plan-1@example.net>"

    everyone = uses.update.update(
        AGENT,
        str(saved.draft_id),
        DraftRequest(plain_text_body="Looks good.", answered_email_id=first, answering="everyone"),
    )
    assert (everyone.revision, everyone.recipient_count) == (2, 2)
    (path,) = _drafts_folder(services)
    assert _parsed(path)["Cc"] == "carol@example.net"
    assert _parsed(path)["Message-ID"] == draft["Message-ID"]

    second = _store(services, _original("Watering rota", "<rota-1@example.net>"))
    moved = uses.update.update(
        AGENT,
        str(saved.draft_id),
        DraftRequest(plain_text_body="Fine.", answered_email_id=second, answering="senderOnly"),
    )
    assert moved.revision == 3
    (path,) = _drafts_folder(services)
    assert _parsed(path)["In-Reply-To"] == "<rota-1@example.net>"
    assert _parsed(path)["Subject"] == "Re: Watering rota"

    assert uses.delete.delete(AGENT, str(saved.draft_id)).outcome is DeleteOutcome.DELETED
    assert _drafts_folder(services) == []


def test_a_forward_draft_carries_the_files_and_leaves_drafts_once_delivered(
    services: Services,
) -> None:
    original = _store(services, _original("Planting plan", "<plan-2@example.net>"))
    uses = services.drafting()
    saved = uses.save.save(
        AGENT,
        DraftRequest(
            plain_text_body="For you.", answered_email_id=original, answering="forward", to=[FRIEND]
        ),
    )
    (path,) = _drafts_folder(services)
    drafted = path.read_bytes()
    (attachment,) = list(_parsed(path).iter_attachments())
    assert attachment.get_content() == PDF
    assert _parsed(path)["Subject"] == "Fwd: Planting plan"

    uses.send.send(AGENT, str(saved.draft_id))
    assert services.delivery_pass().run_once().sent == 1
    assert _drafts_folder(services) == []
    _, received = services.connectors.local.folder("friend", "INBOX").scan()
    (arrived,) = received.values()
    assert as_sent(arrived.read_bytes(), drafted)
    (received_attachment,) = list(_parsed(arrived).iter_attachments())
    assert received_attachment.get_content() == PDF
    _, sent = services.connectors.local.folder("home", "Sent").scan()
    assert len(sent) == 1
