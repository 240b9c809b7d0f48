"""The contact book is no way round a folder withheld from tools, on a real Dovecot account
and on SQLite and PostgreSQL.

Collection takes nobody from a withheld folder (`VisibleToTools = false`, or a folder no
mapping names any more), and what a withheld folder alone supports leaves the book: a person
only its mail names, and a name only its mail gave somebody whom visible mail names too.
That happens when the configuration changes (the next start), and on the next pass after
mail was moved into a withheld folder. A folder made visible again contributes again.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import pytest

from log_audit import register_all
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mailfathom.domain.config import AccountConfig, DeploymentConfig, FolderMapping, StoreConfig
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin
from mailfathom.domain.folders import FolderRole
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config

CALLER = Caller(permissions=ALL_PERMISSIONS, label="agent")
OWN = "owner@withheld.example"
INBOX = FolderMapping("INBOX", "INBOX", FolderRole.INBOX)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreConfig:
    url = request.getfixturevalue("migrated_postgres_url") if request.param != "sqlite" else None
    return StoreConfig(data_dir=tmp_path / "data", database_url=url)


def _tag() -> str:
    return uuid.uuid4().hex[:10]


def _mail(sender: str, subject: str) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = OWN
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime(2026, 4, 1, 9, 0, tzinfo=UTC))
    message["Message-ID"] = make_msgid(domain="withheld.example")
    message.set_content("A line.\n")
    register_all([sender, subject])
    return bytes(message)


def _open(store: StoreConfig, account: AccountConfig) -> Services:
    return Services.open(DeploymentConfig(store=store, accounts=(account,)))


def _book(services: Services) -> dict[str, str]:
    """Address -> name of every collected contact."""
    held = services.contacts().listing.list(CALLER, origin="collected", page_size=200).contacts
    return {c.preferred_address: c.display_name for c in held}


def _found(services: Services, text: str) -> list[str]:
    """What a search of the book, and a lookup by address, give a caller for `text`."""
    listed = services.contacts().listing.list(CALLER, search=text).contacts
    found = [c.preferred_address for c in listed]
    if "@" in text:
        one = services.contacts().lookup.get(CALLER, None, text)
        found += [] if one is None else [one.preferred_address]
    return found


def _subjects(services: Services) -> set[str]:
    page = services.reading().timeline.read(
        CALLER, TimelineRequest(SelectionInput(include_junk_mail=True), page_size=100)
    )
    return {s.subject or "" for s in page.emails}


def _account(imap: ImapAccount, folders: Sequence[FolderMapping]) -> AccountConfig:
    return imap_account_config(imap, folders, addresses=(OWN,))


def test_collection_takes_nobody_from_a_withheld_folder(
    imap_account: ImapAccount, store: StoreConfig
) -> None:
    tag = _tag()
    seen, hidden, both = (f"{who}-{tag}@people.example" for who in ("seen", "hidden", "both"))
    remote = RemoteMailbox(imap_account)
    remote.conn.create("Private")
    remote.append(_mail(f"Seen Person {tag} <{seen}>", f"visible {tag}"))
    remote.append(_mail(f"<{both}>", f"visible unnamed {tag}"))
    remote.append(_mail(f"Hidden Person {tag} <{hidden}>", f"withheld {tag}"), "Private")
    remote.append(_mail(f"Secret Name {tag} <{both}>", f"withheld named {tag}"), "Private")
    remote.close()
    private = FolderMapping("Private", "Private", visible_to_tools=False)
    account = _account(imap_account, (private, INBOX))
    with _open(store, account) as services:
        services.account_synchronizer().run_once(account)
        assert _book(services) == {seen: f"Seen Person {tag}", both: ""}
        for text in (hidden, hidden[:9], "hidden-", "Hidden Person", f"Secret Name {tag}"):
            assert _found(services, text) == []
        # What an earlier version collected from the withheld folder leaves the book when
        # the deployment next starts.
        book = SqlContactBook(services.engine)
        book.collect([SeenPerson(hidden, f"Hidden Person {tag}")], datetime.now(UTC))
        assert hidden in _book(services)
    with _open(store, account) as services:
        assert _book(services) == {seen: f"Seen Person {tag}", both: ""}


def test_what_a_folder_withheld_later_alone_supports_leaves_the_book(
    imap_account: ImapAccount, store: StoreConfig
) -> None:
    tag = _tag()
    only, shared, kept = (f"{who}-{tag}@people.example" for who in ("only", "shared", "kept"))
    remote = RemoteMailbox(imap_account)
    remote.conn.create("Archive")
    remote.append(_mail(f"<{shared}>", f"inbox unnamed {tag}"))
    remote.append(_mail(f"Kept Name {tag} <{kept}>", f"inbox named {tag}"))
    remote.append(_mail(f"Archive Only {tag} <{only}>", f"archived {tag}"), "Archive")
    remote.append(_mail(f"Archive Name {tag} <{shared}>", f"archived named {tag}"), "Archive")
    remote.append(_mail(f"Other Name {tag} <{kept}>", f"archived kept {tag}"), "Archive")
    remote.close()
    archive = FolderMapping("Archive", "Archive", FolderRole.ARCHIVE)
    visible = _account(imap_account, (INBOX, archive))
    everyone = {
        only: f"Archive Only {tag}",
        shared: f"Archive Name {tag}",
        kept: f"Kept Name {tag}",
    }
    with _open(store, visible) as services:
        services.account_synchronizer().run_once(visible)
        assert _book(services) == everyone

    after = {shared: "", kept: f"Kept Name {tag}"}
    withheld = replace(visible, folders=(INBOX, replace(archive, visible_to_tools=False)))
    unmapped = replace(visible, folders=(INBOX,))
    for account in (withheld, unmapped):
        with _open(store, account) as services:
            assert _book(services) == after
            assert _found(services, "archive only") == []
            assert _found(services, only) == []
            assert f"archived {tag}" not in _subjects(services)
            # A pass of the account changes none of it.
            services.account_synchronizer().run_once(account)
            assert _book(services) == after

    # Visible again, the folder contributes again.
    with _open(store, visible) as services:
        assert _book(services) == everyone
        assert f"archived {tag}" in _subjects(services)


def test_mail_moved_into_a_withheld_folder_takes_its_sender_out_on_the_next_pass(
    imap_account: ImapAccount, store: StoreConfig
) -> None:
    tag = _tag()
    mover, stays = (f"{who}-{tag}@people.example" for who in ("mover", "stays"))
    remote = RemoteMailbox(imap_account)
    remote.conn.create("Private")
    uid = remote.append(_mail(f"Mover {tag} <{mover}>", f"to be moved {tag}"))
    remote.append(_mail(f"Stays {tag} <{stays}>", f"stays {tag}"))
    private = FolderMapping("Private", "Private", visible_to_tools=False)
    account = _account(imap_account, (INBOX, private))
    with _open(store, account) as services:
        sync = services.account_synchronizer()
        sync.run_once(account)
        assert _book(services) == {mover: f"Mover {tag}", stays: f"Stays {tag}"}
        remote.conn.select("INBOX")
        typ, data = remote.conn.uid("MOVE", str(uid), "Private")
        assert typ == "OK", data
        remote.close()
        sync.run_once(account)
        assert _book(services) == {stays: f"Stays {tag}"}
        assert _found(services, mover) == []
        book = services.contacts().listing.list(CALLER, origin="collected").contacts
        assert all(c.origin is ContactOrigin.COLLECTED for c in book)


def test_a_folder_no_mapping_names_any_more_is_read_by_no_tool(
    imap_account: ImapAccount, store: StoreConfig
) -> None:
    """Taking a folder's mapping out of the configuration withholds it as `VisibleToTools =
    false` does: the next start leaves it out of every answer, though its rows stay."""
    tag = _tag()
    remote = RemoteMailbox(imap_account)
    remote.conn.create("Projects")
    remote.append(_mail(f"Planner {tag} <planner-{tag}@people.example>", f"plan {tag}"), "Projects")
    remote.append(_mail(f"Inboxer {tag} <inboxer-{tag}@people.example>", f"hello {tag}"))
    remote.close()
    projects = FolderMapping("Projects", "Projects")
    mapped = _account(imap_account, (INBOX, projects))
    with _open(store, mapped) as services:
        services.account_synchronizer().run_once(mapped)
        assert f"plan {tag}" in _subjects(services)
    with _open(store, replace(mapped, folders=(INBOX,))) as services:
        reading = services.reading()
        (entry,) = reading.accounts.read(CALLER).accounts
        assert [f.alias for f in entry.folders] == ["INBOX"]
        assert _subjects(services) == {f"hello {tag}"}
        found = reading.search.search(
            CALLER, SearchRequest(query_text=f"plan {tag}", selection=SelectionInput())
        )
        assert (found.matches, [f.alias for f in found.folder_freshness]) == ((), ["INBOX"])
        named = reading.timeline.read(
            CALLER, TimelineRequest(SelectionInput(folders=["Projects"]), page_size=10)
        )
        assert named.emails == ()
