"""What an erasure that leaves no byte behind costs, against one that only deletes the rows.

    uv run python bench/contact_erasure.py [--contacts N] [--erasures K] [--postgres]

A book of N contacts (a name, two addresses, a 600-character note each) is written into a
fresh store: the embedded SQLite file, and with --postgres a private PostgreSQL server as
well. K of them are then erased one at a time the way `delete_contact` does now
(`SqlContactBook.erase`: the delete with SQLite's secure_delete on, then the TRUNCATE
checkpoint, or PostgreSQL's VACUUM FULL of the book's tables), and K others by the bare
delete of the same rows in one transaction, which is what an erasure cost before it
scrubbed anything. Printed per store: the median and the largest time of one erasure each
way, and the ratio of the medians. Nothing here passes or fails.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO / "tests"))

from machine import log, stores  # noqa: E402

from mailfathom.adapters.sql import migrate  # noqa: E402
from mailfathom.adapters.sql.contacts import SqlContactBook  # noqa: E402
from mailfathom.adapters.sql.engine import create_store_engine  # noqa: E402
from mailfathom.adapters.sql.schema import contact_addresses, contacts  # noqa: E402
from mailfathom.app.contacts.ports import NewContact  # noqa: E402
from mailfathom.domain.contacts import ContactOrigin, ContactRecord  # noqa: E402


def _fill(engine: sa.Engine, count: int) -> list[uuid.UUID]:
    book = SqlContactBook(engine)
    ids: list[uuid.UUID] = []
    at = datetime.now(UTC)
    for n in range(count):
        first, second = f"person{n}@book.example", f"p{n}.work@book.example"
        note = (f"note {n} " * 80)[:600]
        record = ContactRecord(f"Person Number {n:06}", (first, second), first, note)
        new = NewContact(uuid.uuid4(), record, ContactOrigin.ASSERTED, at)
        book.create(new)
        ids.append(new.contact_id)
    return ids


def _bare_delete(engine: sa.Engine) -> Callable[[uuid.UUID], None]:
    def erase(contact_id: uuid.UUID) -> None:
        with engine.begin() as c:
            c.execute(
                contact_addresses.delete().where(contact_addresses.c.contact_id == contact_id)
            )
            c.execute(contacts.delete().where(contacts.c.contact_id == contact_id))

    return erase


def _timed(erase: Callable[[uuid.UUID], object], ids: list[uuid.UUID]) -> list[float]:
    took: list[float] = []
    for contact_id in ids:
        start = time.perf_counter()
        erase(contact_id)
        took.append(time.perf_counter() - start)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contacts", type=int, default=20_000)
    parser.add_argument("--erasures", type=int, default=20)
    parser.add_argument("--postgres", action="store_true", help="measure PostgreSQL as well")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="contact-erasure-") as scratch,
        stores(Path(scratch), args.postgres, "erasure_bench") as found,
    ):
        for label, url in found:
            _measure(label, url, args.contacts, args.erasures)


def _measure(label: str, url: str, count: int, k: int) -> None:
    engine = create_store_engine(url)
    try:
        migrate.upgrade(engine)
        log(f"{label}: writing {count} contacts")
        ids = _fill(engine, count)
        scrubbed = _timed(SqlContactBook(engine).erase, ids[:k])
        bare = _timed(_bare_delete(engine), ids[k : 2 * k])
    finally:
        engine.dispose()
    median_scrubbed, median_bare = statistics.median(scrubbed), statistics.median(bare)
    print(
        f"{label}: {count} contacts, {k} erasures each way; "
        f"scrubbed median {median_scrubbed * 1000:.1f} ms (max {max(scrubbed) * 1000:.1f}), "
        f"bare delete median {median_bare * 1000:.1f} ms (max {max(bare) * 1000:.1f}); "
        f"ratio {median_scrubbed / median_bare:.1f}x"
    )


if __name__ == "__main__":
    main()
