"""Bringing a database to the latest schema with the Alembic migrations shipped in the package."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def _alembic_config(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: sa.Engine, revision: str = "head") -> None:
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), revision)


def downgrade(engine: sa.Engine, revision: str) -> None:
    with engine.begin() as connection:
        command.downgrade(_alembic_config(connection), revision)


def current_revision(engine: sa.Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(config).get_current_head()
