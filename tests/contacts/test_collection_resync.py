"""Collection when a Dovecot folder is renumbered: the mail read anew after a UIDVALIDITY
change collects only the sender who is new, and nobody twice."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from pathlib import Path

import sqlalchemy as sa

from log_audit import register
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.schema import contact_addresses, contacts
from mailfathom.domain.contacts import ContactOrigin
from servers.dovecot import DovecotServer, ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services


def _message(name: str, address: str, subject: str) -> bytes:
    message = EmailMessage()
    message["From"] = f"{name} <{address}>"
    message["To"] = "owner@example.net"
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    message["Message-ID"] = make_msgid(domain="example.org")
    message.set_content("A line of text.\n")
    register(name, address, subject)
    return bytes(message)


def _counts(engine: sa.Engine) -> tuple[int, int]:
    with engine.connect() as c:
        people = c.execute(sa.select(sa.func.count()).select_from(contacts)).scalar_one()
        held = c.execute(sa.select(sa.func.count()).select_from(contact_addresses)).scalar_one()
    return people, held


def test_mail_read_anew_after_a_uidvalidity_change_collects_nobody_twice(
    tmp_path: Path, dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    remote = RemoteMailbox(imap_account)
    uids = [
        remote.append(_message(f"Writer Number {i}", f"writer{i}@example.org", f"Note {i}"))
        for i in range(4)
    ]
    account = imap_account_config(imap_account, addresses=("owner@example.net",))
    with open_services(tmp_path, account) as services:
        sync = services.account_synchronizer()
        first = sync.run_once(account).folders[0]
        assert first.contacts_collected == 4
        remote.expunge(uids[0])
        remote.close()
        dovecot.reset_uidvalidity(imap_account.username)
        dovecot.save_message(
            imap_account.username,
            _message("Late Arrival", "late@example.org", "Arrived during the reset"),
        )
        reset = sync.run_once(account).folders[0]
        assert reset.uidvalidity_reset
        assert reset.contacts_collected == 1
        assert _counts(services.engine) == (5, 5)
        book = SqlContactBook(services.engine)
        late = book.find_by_address("late@example.org")
        assert late is not None
        assert (late.display_name, late.origin) == ("Late Arrival", ContactOrigin.COLLECTED)
        assert book.find_by_address("owner@example.net") is None
        assert sync.run_once(account).folders[0].contacts_collected == 0
        assert _counts(services.engine) == (5, 5)
