"""An erasure leaves no byte of the record in the store's files, on SQLite and PostgreSQL.

A record of the largest size the book holds (a 256-character name, 32 addresses of 254
characters, a 4000-character note), each field random text of its own, is written, amended,
and erased through the use cases the tools and `mfctl contact` call. The store's files are
scanned for any stretch of 12 characters of any field: every field is found after the write
(so the scan can see what it looks for), what an amendment dropped is found nowhere after
it, and nothing of the record is found after the erasure. On PostgreSQL the statistics a
routine ANALYZE gathers are part of the files scanned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from log_audit import register_all
from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.contacts import MAX_ADDRESSES, MAX_NAME_CHARACTERS, MAX_NOTE_CHARACTERS
from mailfathom.domain.folders import FolderRole

from .traces import (
    LargestRecord,
    fields_held,
    longest_address,
    random_text,
    remnants,
    store_files,
)
from .vcard_round_trip import OPERATOR


@dataclass(frozen=True)
class Store:
    config: StoreConfig
    postgres_data: Path | None

    def files(self, engine: sa.Engine) -> list[Path]:
        return store_files(engine, self.config.data_dir, self.postgres_data)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        return Store(StoreConfig(data_dir=tmp_path / "data"), None)
    url = request.getfixturevalue("migrated_postgres_url")
    server = request.getfixturevalue("postgres_server")
    return Store(StoreConfig(data_dir=tmp_path / "data", database_url=url), server.data_dir)


@pytest.fixture
def services(store: Store) -> Iterator[Services]:
    with Services.open(DeploymentConfig(store=store.config, accounts=())) as opened:
        yield opened


def _write(services: Services, record: LargestRecord) -> str:
    written = services.contacts().creation.create(
        OPERATOR, record.name, list(record.addresses), record.addresses[-1], record.note
    )
    assert written.contact is not None
    return str(written.contact.contact_id)


def _analyze(services: Services) -> None:
    """What autovacuum does to a table that changed enough: statistics over its columns."""
    if services.engine.dialect.name == "postgresql":
        with services.engine.connect() as c:
            c.exec_driver_sql("ANALYZE contacts, contact_addresses")
            c.commit()


def test_an_erased_record_of_the_largest_size_leaves_no_byte_in_any_file(
    store: Store, services: Services
) -> None:
    # Other people in the book, so statistics over its columns have values to keep.
    for _ in range(9):
        address = f"{random_text(20)}@example.test"
        services.contacts().creation.create(OPERATOR, random_text(30), [address], address)
    first = LargestRecord.fresh()
    contact_id = _write(services, first)
    _analyze(services)
    assert fields_held(store.files(services.engine), first.fields) == set(first.fields)

    # The amendment keeps half of the addresses and replaces the rest, the name and the note.
    second = LargestRecord.fresh(keep=first.addresses[:16])
    amended = services.contacts().amendment.update(
        OPERATOR,
        contact_id,
        second.name,
        list(second.addresses),
        second.addresses[0],
        second.note,
    )
    assert amended.contact is not None
    _analyze(services)
    dropped = {k: v for k, v in first.fields.items() if v not in second.fields.values()}
    assert len(dropped) == 18
    files = store.files(services.engine)
    assert remnants(files, dropped) == {}
    assert fields_held(files, second.fields) == set(second.fields)

    erased = services.contacts().erasure.delete(OPERATOR, contact_id)
    assert (erased.was_held, erased.addresses_erased) == (True, 32)
    _analyze(services)
    assert remnants(store.files(services.engine), {**first.fields, **second.fields}) == {}


def test_a_peer_erased_with_its_account_leaves_no_byte_of_the_owners_note(store: Store) -> None:
    """A local account's peer record carries a note its owner wrote; when the account leaves
    the configuration the record is erased, and the note with it, from every file."""
    addresses = tuple(longest_address() for _ in range(MAX_ADDRESSES))
    account = AccountConfig(
        account_id="leaving",
        display_name=random_text(MAX_NAME_CHARACTERS),
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX", FolderRole.INBOX),),
        addresses=addresses,
    )
    note = random_text(MAX_NOTE_CHARACTERS)
    register_all([note, account.display_name, *addresses])
    fields = {"name": account.display_name, "note": note} | {
        f"address {n}": a for n, a in enumerate(addresses)
    }
    with Services.open(DeploymentConfig(store=store.config, accounts=(account,))) as services:
        (peer,) = services.contacts().listing.list(OPERATOR).contacts
        noted = services.contacts().amendment.update(
            OPERATOR, str(peer.contact_id), peer.display_name, list(peer.addresses),
            peer.preferred_address, note,
        )  # fmt: skip
        assert noted.contact is not None
        _analyze(services)
        assert fields_held(store.files(services.engine), fields) == set(fields)
    with Services.open(DeploymentConfig(store=store.config, accounts=())) as services:
        assert services.contacts().listing.list(OPERATOR).contacts == ()
        _analyze(services)
        assert remnants(store.files(services.engine), fields) == {}
