"""Records of the largest size the book holds, each field made of random letters and digits,
and a scan of a store's files for any stretch of them.

Every field is random text of its own, so a stretch of 12 of its characters found in a file
is a remnant of that field and nothing else; the scan looks at every such stretch, so a copy
cut across pages, or a field only part of which survived, is found as well as a whole one.
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from log_audit import register_all
from mailfathom.domain.contacts import MAX_ADDRESSES, MAX_NAME_CHARACTERS, MAX_NOTE_CHARACTERS

WINDOW = 12
_ALPHABET = string.ascii_lowercase + string.digits
_RUN = re.compile(rb"[a-z0-9]{%d,}" % WINDOW)
_LOCAL_PART = 64
_ADDRESS = 254  # the longest plain address (RFC 5321 path limit less its brackets)


def random_text(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def longest_address() -> str:
    """A plain address of the greatest length one may have, random in every label."""
    tail = ".test"
    room = _ADDRESS - _LOCAL_PART - 1 - len(tail)
    labels = [random_text(63), random_text(63)]
    labels.append(random_text(room - sum(len(label) + 1 for label in labels)))
    address = random_text(_LOCAL_PART) + "@" + ".".join(labels) + tail
    assert len(address) == _ADDRESS
    return address


@dataclass(frozen=True)
class LargestRecord:
    """A record with every field at its bound: the name, 32 addresses, the note."""

    name: str
    addresses: tuple[str, ...]
    note: str

    @classmethod
    def fresh(cls, keep: Iterable[str] = ()) -> LargestRecord:
        """A new record; `keep` are addresses it holds beside fresh ones."""
        kept = tuple(keep)
        fresh = tuple(longest_address() for _ in range(MAX_ADDRESSES - len(kept)))
        record = cls(
            random_text(MAX_NAME_CHARACTERS), kept + fresh, random_text(MAX_NOTE_CHARACTERS)
        )
        register_all([record.name, record.note, *record.addresses])
        return record

    @property
    def fields(self) -> dict[str, str]:
        named = {f"address {n}": a for n, a in enumerate(self.addresses)}
        return {"name": self.name, "note": self.note, **named}


def windows(fields: dict[str, str]) -> dict[bytes, str]:
    """Every stretch of WINDOW characters of every field's random runs -> the field."""
    found: dict[bytes, str] = {}
    for label, value in fields.items():
        for run in _RUN.findall(value.encode()):
            for start in range(len(run) - WINDOW + 1):
                found[run[start : start + WINDOW]] = label
    return found


def remnants(files: Iterable[Path], fields: dict[str, str]) -> dict[str, set[str]]:
    """Which fields each file holds a stretch of (files holding none are left out)."""
    wanted = windows(fields)
    held: dict[str, set[str]] = {}
    for path in files:
        data = path.read_bytes()
        for match in _RUN.finditer(data):
            run = match.group()
            for start in range(len(run) - WINDOW + 1):
                label = wanted.get(run[start : start + WINDOW])
                if label is not None:
                    held.setdefault(str(path), set()).add(label)
    return held


def fields_held(files: Iterable[Path], fields: dict[str, str]) -> set[str]:
    return set().union(*remnants(files, fields).values())


def store_files(engine: sa.Engine, data_dir: Path, postgres_data: Path | None) -> list[Path]:
    """Every file the store keeps the book in, its latest writes on disk.

    SQLite: every file under the data directory (the database, its write-ahead log and its
    shared-memory index among them). PostgreSQL: a CHECKPOINT, then every file of the
    database's own directory (tables, TOAST, indexes, catalogs such as pg_statistic) and of
    the cluster's shared catalogs; each contact relation's file must be among them."""
    if postgres_data is None:
        return sorted(p for p in data_dir.rglob("*") if p.is_file())
    with engine.connect() as c:
        c.exec_driver_sql("CHECKPOINT")
        database = c.exec_driver_sql(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).scalar_one()
        relations = c.exec_driver_sql(
            "SELECT pg_relation_filepath(c.oid) FROM pg_class c "
            "WHERE c.relname IN ('contacts', 'contact_addresses') "
            "OR c.oid IN (SELECT reltoastrelid FROM pg_class "
            "             WHERE relname IN ('contacts', 'contact_addresses')) "
            "OR c.oid IN (SELECT indexrelid FROM pg_index i JOIN pg_class t "
            "             ON t.oid = i.indrelid WHERE t.relname IN "
            "             ('contacts', 'contact_addresses') OR t.oid IN "
            "             (SELECT reltoastrelid FROM pg_class "
            "              WHERE relname IN ('contacts', 'contact_addresses')))"
        ).scalars()
        relation_files = [postgres_data / str(path) for path in relations]
    files = sorted(
        p
        for folder in (postgres_data / "base" / str(database), postgres_data / "global")
        for p in folder.iterdir()
        if p.is_file()
    )
    assert len(relation_files) >= 7, relation_files
    assert set(relation_files) <= set(files), relation_files
    return files
