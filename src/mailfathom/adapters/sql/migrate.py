"""Bringing a database to the latest schema with the Alembic migrations shipped in the package.

Alembic (and the template engine it brings) is imported only when a migration is due or a
revision is asked for: a database already at the newest revision is recognized with one query,
so a command that opens an up-to-date store neither waits for that import nor keeps its memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).with_name("migrations")

NEWEST_REVISION = "0004_outbox"
"""The newest migration under `migrations/versions`; a test holds it to Alembic's own head."""


def _alembic_config(connection: sa.Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    if revision in ("head", NEWEST_REVISION) and stored_revision(engine) == NEWEST_REVISION:
        return
    from alembic import command

    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), revision)


def downgrade(engine: sa.Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as connection:
        command.downgrade(_alembic_config(connection), revision)


def stored_revision(engine: sa.Engine) -> str | None:
    """The revision recorded in the database, read without Alembic (None: none recorded).
    Only a single recorded revision counts; anything else is left to Alembic."""
    with engine.connect() as connection:
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
