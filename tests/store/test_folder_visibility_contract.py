"""Folder rows follow the configuration, and the contact book holds nothing only withheld mail
supports, on SQLite and PostgreSQL alike.

No in-memory backend: the folder rows are the sync store's (`FolderVisibility`), which
nothing fakes, since synchronization runs only on the real stores, and what the book forgets
is read from the participants of the mail those stores hold."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.app.contacts.ports import NewContact
from mailfathom.domain.config import AccountConfig, AccountKind, FolderMapping
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactRecord
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.message import HeaderRole, Participant

from .builders import new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 7
INBOX = FolderMapping("INBOX", "INBOX", FolderRole.INBOX)
SENT = FolderMapping("Sent", "Sent", FolderRole.SENT)
JUNK = FolderMapping("Junk", "Junk", FolderRole.JUNK)
PRIVATE = FolderMapping("Private", "Private", visible_to_tools=False)


def _account(store: SqlSyncStore, account_id: str = "acct") -> None:
    store.ensure_account(
        AccountConfig(
            account_id=account_id, display_name=account_id, kind=AccountKind.LOCAL, folders=()
        )
    )


def _visible(store: SqlSyncStore) -> dict[tuple[str, str], bool]:
    with store.engine.connect() as c:
        rows = c.execute(sa.text("SELECT account_id, alias, visible_to_tools FROM folders"))
        return {(r[0], r[1]): bool(r[2]) for r in rows}


def test_settling_withholds_what_no_mapping_names_and_answers_what_it_shows(
    store: SqlSyncStore,
) -> None:
    _account(store)
    _account(store, "gone")
    inbox, private, archive = store.ensure_folders(
        "acct", [INBOX, PRIVATE, FolderMapping("Archive", "Archive")]
    )
    store.ensure_folders("gone", [INBOX])
    assert store.withhold_accounts(["acct"]) == 1
    assert store.withhold_accounts(["acct"]) == 0
    shown = store.settle("acct", [INBOX, FolderMapping("Private", "Hidden No More")])
    assert [(f.folder_id, f.alias, f.visible_to_tools) for f in shown] == [
        (private.folder_id, "Hidden No More", True)
    ]
    assert _visible(store) == {
        ("acct", "INBOX"): True,
        ("acct", "Hidden No More"): True,
        ("acct", "Archive"): False,
        ("gone", "INBOX"): False,
    }
    assert store.settle("acct", [INBOX, FolderMapping("Private", "Hidden No More")]) == []
    # Nothing is created: a mapping without a row waits for synchronization.
    assert store.settle("acct", [INBOX, FolderMapping("New", "New")]) == []
    assert ("acct", "New") not in _visible(store)
    assert inbox.folder_id != archive.folder_id


def test_stored_participants_come_a_batch_at_a_time_in_stored_order(store: SqlSyncStore) -> None:
    _account(store)
    (inbox,) = store.ensure_folders("acct", [INBOX])
    messages = [
        new_message(uid, normalized(f"S{uid}", message_id=f"{uid}@x", sender=f"s{uid}@x.test"))
        for uid in range(1, 4)
    ]
    store.add_messages(inbox, VALIDITY, messages, NOW)
    batches = list(store.stored_participants(inbox.folder_id))
    flat = [p for batch in batches for p in batch]
    assert [p.address for p in flat if p.role is HeaderRole.FROM] == [
        "s1@x.test",
        "s2@x.test",
        "s3@x.test",
    ]
    assert all(isinstance(p, Participant) for p in flat)


def _mail(
    store: SqlSyncStore,
    folder_mapping: FolderMapping,
    uid: int,
    sender: str,
    account_id: str = "acct",
) -> None:
    (folder,) = store.ensure_folders(account_id, [folder_mapping])
    name, _, address = sender.rpartition(" ")
    message = normalized(f"S{uid}", message_id=f"{uid}-{folder.alias}@x", sender=address)
    message = dataclasses.replace(
        message,
        participants=(
            Participant(HeaderRole.FROM, address, name or None),
            Participant(HeaderRole.TO, "recipient@x.test", "Only A Recipient"),
        ),
    )
    store.add_messages(folder, VALIDITY, [new_message(uid, message)], NOW)


def test_the_book_forgets_what_only_withheld_mail_supports(
    store: SqlSyncStore, engine: sa.Engine
) -> None:
    _account(store)
    book = SqlContactBook(engine)
    _mail(store, PRIVATE, 1, "Hidden hidden@x.test")
    _mail(store, PRIVATE, 2, "Secret shared@x.test")
    _mail(store, INBOX, 3, "shared@x.test")
    _mail(store, PRIVATE, 4, "Named named@x.test")
    _mail(store, INBOX, 5, "Named named@x.test")
    _mail(store, JUNK, 6, "Spammer junk@x.test")
    _mail(store, PRIVATE, 7, "Spammer junk@x.test")
    _mail(store, INBOX, 8, "Gone gone@x.test")
    seen = [
        SeenPerson("hidden@x.test", "Hidden"),
        SeenPerson("shared@x.test", "Secret"),
        SeenPerson("named@x.test", "Named"),
        SeenPerson("junk@x.test", "Spammer"),
        SeenPerson("recipient@x.test", "Only A Recipient"),
        SeenPerson("expunged@x.test", "Expunged"),
    ]
    book.collect(seen, NOW)
    asserted = ContactRecord(
        "Written Down", ("asserted.hidden@x.test",), "asserted.hidden@x.test", None
    )
    book.create(NewContact(uuid.uuid4(), asserted, ContactOrigin.ASSERTED, NOW))
    _mail(store, PRIVATE, 9, "Whoever asserted.hidden@x.test")

    assert book.forget_withheld() == 3
    held = {c.preferred_address: c.display_name for c in book.page(None, None, None, 50)}
    assert held == {
        "shared@x.test": "",
        "named@x.test": "Named",
        "recipient@x.test": "Only A Recipient",
        "expunged@x.test": "Expunged",
        "asserted.hidden@x.test": "Written Down",
    }
    assert book.forget_withheld() == 0

    # Mail of a withheld Sent folder contributes its recipients, a visible one keeps them.
    _mail(store, dataclasses.replace(SENT, visible_to_tools=False), 10, "x@y.test")
    _mail(store, dataclasses.replace(SENT, remote_name="Sent2", alias="Sent2"), 11, "x@y.test")
    assert book.forget_withheld() == 0
    assert book.find_by_address("recipient@x.test") is not None
    store.settle("acct", [INBOX, PRIVATE, JUNK, dataclasses.replace(SENT, visible_to_tools=False)])
    assert book.forget_withheld() == 1
    assert book.find_by_address("recipient@x.test") is None


def test_mail_of_any_account_keeps_what_it_supports(store: SqlSyncStore, engine: sa.Engine) -> None:
    """The book is the deployment's: visible mail of one account keeps an address that only
    withheld mail of another names, and gives it the name first stored."""
    _account(store)
    _account(store, "other")
    book = SqlContactBook(engine)
    _mail(store, PRIVATE, 1, "Secret both@x.test")
    _mail(store, INBOX, 2, "Shown both@x.test", account_id="other")
    _mail(store, INBOX, 3, "Later both@x.test")
    _mail(store, PRIVATE, 4, "Alone alone@x.test", account_id="other")
    book.collect([SeenPerson("both@x.test", "Secret"), SeenPerson("alone@x.test", "Alone")], NOW)

    assert book.forget_withheld() == 2
    held = {c.preferred_address: c.display_name for c in book.page(None, None, None, 50)}
    assert held == {"both@x.test": "Shown"}


class RowsRead:
    """How many rows the SELECT statements sent while it counts would hand back: each is run
    again, as sent, in the same transaction on its own cursor, and its rows counted."""

    def __init__(self) -> None:
        self.rows = 0

    def after(self, conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            again = conn.connection.dbapi_connection.cursor()
            again.execute(statement, parameters)
            self.rows += len(again.fetchall())
            again.close()

    def of(self, engine: sa.Engine, run: Callable[[], object]) -> int:
        self.rows = 0
        event.listen(engine, "after_cursor_execute", self.after)
        try:
            run()
        finally:
            event.remove(engine, "after_cursor_execute", self.after)
        return self.rows


def _withheld_mail(store: SqlSyncStore, first: int, count: int) -> None:
    """`count` messages in Private, each from a sender of its own that nobody collected."""
    (folder,) = store.ensure_folders("acct", [PRIVATE])
    store.add_messages(
        folder,
        VALIDITY,
        [
            new_message(
                uid,
                normalized(f"S{uid}", message_id=f"{uid}@x", sender=f"s{uid}@many.test"),
            )
            for uid in range(first, first + count)
        ],
        NOW,
    )


def test_forgetting_reads_the_rows_of_collected_addresses_not_of_all_withheld_mail(
    store: SqlSyncStore, engine: sa.Engine
) -> None:
    """Withheld mail that names nobody the book collected is not read out of the store: the
    rows `forget_withheld` reads stay the same however much more of it there is."""
    _account(store)
    book = SqlContactBook(engine)
    _mail(store, INBOX, 1, "Shown shown@x.test")
    _mail(store, PRIVATE, 2, "Hidden hidden@x.test")
    book.collect([SeenPerson("hidden@x.test", "Hidden")], NOW)
    _withheld_mail(store, 100, 200)
    rows = RowsRead()
    read = rows.of(engine, book.forget_withheld)
    book.collect([SeenPerson("hidden@x.test", "Hidden")], NOW)
    _withheld_mail(store, 1000, 400)

    assert rows.of(engine, book.forget_withheld) == read
    assert book.find_by_address("hidden@x.test") is None
