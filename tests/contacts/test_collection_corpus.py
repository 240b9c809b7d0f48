"""Contact collection over real mail on a real Dovecot account.

The account holds corpus mail in three folders: SpamAssassin ham in INBOX, SpamAssassin spam
in Junk and linux-mips list mail in Sent. The book is expected to hold, after a sync, one
collected contact for every plain address that wrote mail outside Junk or was written to from
Sent, less the account's own address and less one address somebody asserted beforehand. What
is expected is read out of the same octets here with the standard library's parser, not with
the normalizer the synchronization uses.
"""

from __future__ import annotations

import contextlib
import email
import imaplib
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import getaddresses
from pathlib import Path

import pytest
import sqlalchemy as sa

from log_audit import register, register_headers
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.app.contacts.ports import NewContact, WriteState
from mailfathom.bootstrap import Services
from mailfathom.domain import addresses
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.contacts import Contact, ContactOrigin, ContactRecord
from mailfathom.domain.folders import FolderRole
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import imap_account_config

# Synchronizing the corpus starts the preparing worker processes.
pytestmark = [pytest.mark.corpus, pytest.mark.process]

# (folder, role, corpus directory, messages taken from it in name order)
FOLDERS = (
    ("INBOX", FolderRole.INBOX, "spamassassin-easy-ham-1", 300),
    ("Junk", FolderRole.JUNK, "spamassassin-spam-1", 150),
    ("Sent", FolderRole.SENT, "linux-mips-2005", 150),
)
RECORDED = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


Mail = dict[str, list[bytes]]


@pytest.fixture(scope="module")
def mail(corpora: Path) -> Mail:
    """Folder name -> the corpus octets it is to hold."""
    found: Mail = {}
    for folder, _, corpus, count in FOLDERS:
        files = sorted(p for p in (corpora / "messages" / corpus).iterdir() if p.is_file())
        found[folder] = [path.read_bytes() for path in files[:count]]
        for octets in found[folder]:
            register_headers(octets)
    return found


@pytest.fixture(scope="module")
def loaded(dovecot: DovecotServer, mail: Mail) -> ImapAccount:
    """One Dovecot user holding the corpus mail, loaded once and only read afterwards."""
    suffix = uuid.uuid4().hex[:12]
    account = dovecot.add_user(f"collect-{suffix}", f"pw-{suffix}")
    conn = imaplib.IMAP4(account.host, account.port, timeout=60)
    conn.login(account.username, account.password)
    try:
        for folder, items in mail.items():
            if folder != "INBOX":
                typ, data = conn.create(folder)
                assert typ == "OK", data
            for octets in items:
                typ, data = conn.append(folder, None, None, octets)
                assert typ == "OK", data
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            conn.logout()
    return account


def _mailboxes(raw: bytes, headers: tuple[str, ...]) -> list[tuple[str, str]]:
    message = email.message_from_bytes(raw)
    values = [str(v) for header in headers for v in message.get_all(header, [])]
    return [(name, address) for name, address in getaddresses(values) if address]


def _plain_keys(pairs: list[tuple[str, str]]) -> set[str]:
    return {address.lower() for _, address in pairs if addresses.is_plain_address(address)}


@dataclass(frozen=True, slots=True)
class Expected:
    own: str
    asserted: str
    collected: frozenset[str]
    junk_only: frozenset[str]


def _expected(mail: Mail) -> Expected:
    senders = {
        folder: set().union(*(_plain_keys(_mailboxes(r, ("From",))) for r in items))
        for folder, items in mail.items()
    }
    recipients: Counter[str] = Counter()
    for r in mail["Sent"]:
        recipients.update(_plain_keys(_mailboxes(r, ("To", "Cc", "Bcc"))))
    # The Sent folder's most frequent recipient stands in for the account's own address.
    own = recipients.most_common(1)[0][0]
    kept = senders["INBOX"] | senders["Sent"] | set(recipients)
    asserted = sorted(senders["INBOX"] - {own})[0]
    return Expected(
        own=own,
        asserted=asserted,
        collected=frozenset(kept - {own, asserted}),
        junk_only=frozenset(senders["Junk"] - kept),
    )


def _folders() -> tuple[FolderMapping, ...]:
    return tuple(FolderMapping(name, name, role) for name, role, _, _ in FOLDERS)


def _config(loaded: ImapAccount, own: str, *, collect: bool = True) -> AccountConfig:
    return imap_account_config(loaded, _folders(), addresses=(own,), collect_contacts=collect)


def _services(data_dir: Path, *accounts: AccountConfig) -> Services:
    return Services.open(
        DeploymentConfig(store=StoreConfig(data_dir=data_dir), accounts=tuple(accounts))
    )


def _keys_by_origin(services: Services) -> dict[ContactOrigin, set[str]]:
    found: dict[ContactOrigin, set[str]] = {origin: set() for origin in ContactOrigin}
    with services.engine.connect() as c:
        rows = c.execute(
            sa.select(contact_addresses.c.address_key, contacts.c.origin).join(
                contacts, contacts.c.contact_id == contact_addresses.c.contact_id
            )
        )
        for key, origin in rows:
            found[ContactOrigin(origin)].add(key)
    return found


def _record_count(services: Services) -> int:
    with services.engine.connect() as c:
        return int(c.execute(sa.select(sa.func.count()).select_from(contacts)).scalar_one())


def _assert(book: SqlContactBook, address: str) -> Contact:
    record = ContactRecord("Written Down Beforehand", (address,), address, "met at a conference")
    written = book.create(NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, RECORDED))
    assert written.state is WriteState.WRITTEN
    assert written.contact is not None
    return written.contact


@pytest.fixture
def expected(mail: Mail) -> Expected:
    found = _expected(mail)
    register(found.own, found.asserted)
    return found


def test_a_sync_collects_senders_outside_junk_and_sent_recipients_once(
    loaded: ImapAccount, mail: Mail, expected: Expected, tmp_path: Path
) -> None:
    assert expected.junk_only, "the Junk folder should hold senders found nowhere else"
    account = _config(loaded, expected.own)
    with _services(tmp_path / "data", account) as services:
        book = SqlContactBook(services.engine)
        asserted = _assert(book, expected.asserted.upper())
        report = services.account_synchronizer().run_once(account)
        assert sum(r.stored for r in report.folders) == sum(len(v) for v in mail.values())

        assert sum(r.contacts_collected for r in report.folders) == len(expected.collected)
        held = _keys_by_origin(services)
        assert held[ContactOrigin.ASSERTED] == {expected.asserted}
        assert held[ContactOrigin.COLLECTED] == expected.collected
        assert _record_count(services) == 1 + len(expected.collected)
        assert not held[ContactOrigin.COLLECTED] & expected.junk_only
        assert expected.own not in held[ContactOrigin.COLLECTED]
        assert book.find(asserted.contact_id) == asserted

        # Every collected record holds one address and prefers it.
        for contact in book.page(None, ContactOrigin.COLLECTED, None, 200):
            assert contact.addresses == (contact.preferred_address,)
            assert contact.note is None
            assert contact.amended_at is None

        again = services.account_synchronizer().run_once(account)
        assert sum(r.stored for r in again.folders) == 0
        assert sum(r.contacts_collected for r in again.folders) == 0
        assert _keys_by_origin(services) == held
        assert _record_count(services) == 1 + len(expected.collected)

    # The same mailbox read anew by a second account of the same store (as after a
    # UIDVALIDITY change) stores every message again and collects nobody more.
    twin = replace(account, account_id=f"{account.account_id}-twin", display_name="Twin")
    with _services(tmp_path / "data", account, twin) as services:
        reread = services.account_synchronizer().run_once(twin)
        assert sum(r.stored for r in reread.folders) == sum(len(v) for v in mail.values())
        assert sum(r.contacts_collected for r in reread.folders) == 0
        assert _keys_by_origin(services) == held
        assert _record_count(services) == 1 + len(expected.collected)
        assert SqlContactBook(services.engine).find(asserted.contact_id) == asserted

    # A fresh store reading the same mailbox, with nothing asserted, collects the same people
    # and the address asserted above as well.
    with _services(tmp_path / "fresh", account) as services:
        services.account_synchronizer().run_once(account)
        fresh = _keys_by_origin(services)
        assert fresh[ContactOrigin.COLLECTED] == expected.collected | {expected.asserted}
        assert fresh[ContactOrigin.ASSERTED] == set()


def test_an_account_that_does_not_collect_adds_nobody(
    loaded: ImapAccount, mail: Mail, expected: Expected, tmp_path: Path
) -> None:
    account = _config(loaded, expected.own, collect=False)
    with _services(tmp_path / "data", account) as services:
        report = services.account_synchronizer().run_once(account)
        assert sum(r.stored for r in report.folders) == sum(len(v) for v in mail.values())
        assert _record_count(services) == 0


def test_a_local_account_collects_through_the_same_sync(
    mail: Mail, expected: Expected, tmp_path: Path
) -> None:
    account = AccountConfig(
        account_id="notes",
        display_name="Notes",
        kind=AccountKind.LOCAL,
        folders=_folders(),
        addresses=(expected.own,),
    )
    data_dir = tmp_path / "data"
    connector = LocalConnector(data_dir)
    for folder, items in mail.items():
        maildir = connector.folder(account.account_id, folder)
        for octets in items:
            maildir.deliver(octets)
    with _services(data_dir, account) as services:
        _assert(SqlContactBook(services.engine), expected.asserted)
        report = services.account_synchronizer().run_once(account)
        assert sum(r.stored for r in report.folders) == sum(len(v) for v in mail.values())
        held = _keys_by_origin(services)
        assert held[ContactOrigin.COLLECTED] == expected.collected
        assert expected.asserted in held[ContactOrigin.ASSERTED]
