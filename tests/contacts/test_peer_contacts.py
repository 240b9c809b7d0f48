"""Local accounts are peers: each one is an asserted contact in the book, found with
list_contacts and written to at the address shown, and the records follow the
configuration as accounts are renamed, readdressed, and removed."""

from __future__ import annotations

from pathlib import Path

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.app.sending.send_email import SendRequest
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.outgoing import Stage

CALLER = Caller(permissions=ALL_PERMISSIONS, label="agent")


def _account(account_id: str, name: str, address: str, delivery_name: str | None) -> str:
    named = f'DisplayName = "{delivery_name}"' if delivery_name else ""
    return f"""
[[Accounts]]
Id = "{account_id}"
DisplayName = "{name}"
Kind = "local"
Addresses = ["{address}"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "{address}"
{named}
"""


def _open(tmp_path: Path, *accounts: str) -> Services:
    path = tmp_path / "mailfathom.toml"
    path.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n\n[MailDelivery]\n'
        'UnvouchedRecipients = "Refuse"\n' + "".join(accounts)
    )
    return Services.open(load_config(path))


def _book(services: Services) -> list[tuple[str, tuple[str, ...], str]]:
    page = services.contacts().listing.list(CALLER)
    return [(c.display_name, c.addresses, c.origin.value) for c in page.contacts]


def test_each_local_account_finds_the_other_and_writes_to_it(tmp_path: Path) -> None:
    agent = _account("agent", "Agent", "agent@team.example", None)
    colleague = _account("colleague", "Colleague", "Colleague@team.example", "Col League")
    with _open(tmp_path, agent, colleague) as services:
        assert _book(services) == [
            ("Agent", ("agent@team.example",), "asserted"),
            ("Col League", ("Colleague@team.example",), "asserted"),
        ]
        found = services.contacts().listing.list(CALLER, search="league").contacts
        (peer,) = found
        # Under Refuse, the address the book shows is one the deployment holds a record of.
        sent = services.sending().send.send(
            CALLER,
            SendRequest(
                account="agent",
                to=[peer.preferred_address],
                subject="Hello",
                plain_text_body="Hello, colleague.",
                idempotency_key="peer-1",
            ),
        )
        assert sent.stage is Stage.QUEUED
    # Renamed, readdressed, removed: the book follows at the next start.
    renamed = _account("agent", "Agent Renamed", "agent2@team.example", None)
    with _open(tmp_path, renamed) as services:
        assert _book(services) == [("Agent Renamed", ("agent2@team.example",), "asserted")]
