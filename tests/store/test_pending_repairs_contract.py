"""What the console's health page reads of waiting repairs: repair requests counted per
folder (gone once the content is fetched again), and reverifications left unfinished; and
who wrote each contact's addresses. On SQLite and PostgreSQL alike."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.pending_repairs import SqlPendingRepairs
from mailfathom.adapters.sql.schema import messages
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.trust_records import SqlTrustRecords
from mailfathom.app.contacts.ports import NewContact
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.contacts import ContactOrigin, ContactRecord, ContactWriter

from .builders import inbox_and_junk, new_message, normalized

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
VALIDITY = 7


def _seqs(engine: sa.Engine, folder_id: int) -> list[int]:
    with engine.connect() as c:
        query = sa.select(messages.c.seq).where(messages.c.folder_id == folder_id)
        return sorted(c.execute(query.order_by(messages.c.seq)).scalars())


def test_repair_requests_are_counted_per_folder(engine: sa.Engine) -> None:
    store, repairs = SqlSyncStore(engine), SqlPendingRepairs(engine)
    inbox, junk = inbox_and_junk(store)
    batch = [new_message(uid, normalized(f"S{uid}", message_id=f"m{uid}@x")) for uid in (1, 2, 3)]
    store.add_messages(inbox, VALIDITY, batch, NOW)
    store.add_messages(junk, VALIDITY, [new_message(9, normalized("J", message_id="j@x"))], NOW)
    assert repairs.repairs_by_folder("acct") == {}
    first, second, _ = _seqs(engine, inbox.folder_id)
    store.request_repair("elsewhere", first, "content-unreadable")
    assert repairs.repairs_by_folder("acct") == {}, "a request names the message's own account"
    store.request_repair("acct", first, "content-unreadable")
    store.request_repair("acct", second, "content-unreadable")
    store.request_repair("acct", second, "content-unreadable")
    (junked,) = _seqs(engine, junk.folder_id)
    store.request_repair("acct", junked, "content-unreadable")
    assert repairs.repairs_by_folder("acct") == {inbox.folder_id: 2, junk.folder_id: 1}
    assert repairs.repairs_by_folder("elsewhere") == {}
    store.fill_content(inbox.folder_id, VALIDITY, 1, normalized("S1", message_id="m1@x"), "ab" * 32)
    assert repairs.repairs_by_folder("acct") == {inbox.folder_id: 1, junk.folder_id: 1}


def test_an_unfinished_reverification_is_seen_until_it_ends(engine: sa.Engine) -> None:
    repairs, records = SqlPendingRepairs(engine), SqlTrustRecords(engine)
    assert repairs.unfinished_reverifications() == frozenset()
    records.record("work", [], 41, NOW)
    assert repairs.unfinished_reverifications() == frozenset({"work"})
    records.finish("work")
    assert repairs.unfinished_reverifications() == frozenset()


def test_who_wrote_each_contact_s_addresses(engine: sa.Engine) -> None:
    book = SqlContactBook(engine)
    agent = uuid.uuid4()
    record = ContactRecord("Ann", ("ann@example.net",), "ann@example.net", None)
    book.create(NewContact(agent, record, ContactOrigin.ASSERTED, NOW))
    book.collect([SeenPerson("carla@example.org", "Carla")], NOW)
    collected = book.find_by_address("carla@example.org")
    assert collected is not None
    absent = uuid.uuid4()
    assert book.writers([agent, collected.contact_id, absent]) == {
        agent: frozenset({ContactWriter.CALLER}),
        collected.contact_id: frozenset({ContactWriter.COLLECTION}),
    }
    owner = ContactRecord("Ann", ("ann@example.net", "ann@example.org"), "ann@example.net", None)
    book.amend(agent, owner, NOW, ContactWriter.OPERATOR)
    assert book.writers([agent]) == {
        agent: frozenset({ContactWriter.CALLER, ContactWriter.OPERATOR})
    }
    book.promote(collected.contact_id, ContactWriter.OPERATOR)
    assert book.writers([collected.contact_id]) == {
        collected.contact_id: frozenset({ContactWriter.OPERATOR})
    }
    assert book.writers([]) == {}
