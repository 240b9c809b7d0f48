"""Bringing a database to the latest schema with the Alembic migrations shipped in the package.

Alembic (and the template engine it brings) is imported only when a migration is due or a
revision is asked for: a database already at the newest revision is recognized with one query,
so a command that opens an up-to-date store neither waits for that import nor keeps its memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).with_name("migrations")

NEWEST_REVISION = "0038_request_digests"
"""The newest migration under `migrations/versions`; a test holds it to Alembic's own head."""


def _alembic_config(connection: sa.Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


# The PostgreSQL advisory lock every migration of a database holds: the octets of
# "mailfath" read as a signed 64-bit number, so no other use of advisory locks meets it.
SCHEMA_LOCK_KEY = 0x6D61696C66617468


@contextmanager
def migrating(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A transaction that no other process migrating the same database runs beside.

    PostgreSQL: a transaction-scoped advisory lock, taken first, held until the commit.
    SQLite: the store's engine begins every writing transaction with BEGIN IMMEDIATE (see
    `engine.create_store_engine`), so the database's write lock is held from the start. Either
    way the revision Alembic reads once the lock is held is the one the previous holder
    committed, and a process that waited finds the work done."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({SCHEMA_LOCK_KEY})")
        yield connection


def upgrade(engine: sa.Engine, revision: str = "head") -> bool:
    """Bring the schema to `revision`; whether this call changed it (False when another
    process, or an earlier open, already had)."""
    if revision in ("head", NEWEST_REVISION) and stored_revision(engine) == NEWEST_REVISION:
        return False
    from alembic import command

    with migrating(engine) as connection:
        before = _recorded_revision(connection)
        command.upgrade(_alembic_config(connection), revision)
        return _recorded_revision(connection) != before


def downgrade(engine: sa.Engine, revision: str) -> None:
    from alembic import command

    with migrating(engine) as connection:
        command.downgrade(_alembic_config(connection), revision)


def stored_revision(engine: sa.Engine) -> str | None:
    """The revision recorded in the database, read without Alembic (None: none recorded).
    Only a single recorded revision counts; anything else is left to Alembic."""
    with engine.connect() as connection:
        return _recorded_revision(connection)


def _recorded_revision(connection: sa.Connection) -> str | None:
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    return str(rows[0][0]) if len(rows) == 1 else None


def current_revision(engine: sa.Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()
