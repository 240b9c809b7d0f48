"""PostgreSQL keeps no sample of the book's names and addresses in its planner statistics:
the migration removes what ANALYZE gathered before it and keeps ANALYZE from gathering more,
and leaves statistics over every other column alone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from mailfathom.adapters.sql import migrate
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.app.contacts.ports import NewContact
from mailfathom.domain.contacts import ContactOrigin, ContactRecord

PERSONAL = {"display_name", "name_key", "preferred_address", "note", "address_key", "address"}


@pytest.fixture
def engine(postgres_url: str) -> Iterator[sa.Engine]:
    created = create_store_engine(postgres_url)
    yield created
    created.dispose()


def _sampled(engine: sa.Engine) -> set[str]:
    with engine.connect() as c:
        c.exec_driver_sql("ANALYZE contacts, contact_addresses")
        rows = c.exec_driver_sql(
            "SELECT attname FROM pg_stats WHERE tablename IN ('contacts', 'contact_addresses')"
        )
        sampled = {row[0] for row in rows}
        c.commit()
    return sampled


def test_the_migration_drops_and_stops_statistics_over_personal_columns(
    engine: sa.Engine,
) -> None:
    migrate.upgrade(engine, "0016_draft_append_marks")
    book = SqlContactBook(engine)
    for n in range(20):
        address = f"person{n}@example.test"
        record = ContactRecord(f"Person {n}", (address,), address, f"note {n}")
        book.create(NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, datetime.now(UTC)))
    assert _sampled(engine) >= PERSONAL

    migrate.upgrade(engine)
    with engine.connect() as c:
        left = {
            row[0]
            for row in c.exec_driver_sql(
                "SELECT attname FROM pg_stats WHERE tablename IN ('contacts', 'contact_addresses')"
            )
        }
    assert not left & PERSONAL
    sampled = _sampled(engine)
    assert not sampled & PERSONAL
    assert {"contact_id", "origin", "recorded_at"} <= sampled

    migrate.downgrade(engine, "0016_draft_append_marks")
    assert _sampled(engine) >= PERSONAL
