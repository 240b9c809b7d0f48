"""What a process asks of the store before it says it is ready: that the database answers,
and that its schema is the one this code was written for (a database another version
migrated further, or one nobody migrated, would be read wrongly)."""

from __future__ import annotations

import sqlalchemy as sa

from mailfathom.adapters.sql.migrate import NEWEST_REVISION, stored_revision


def store_answers(engine: sa.Engine) -> bool:
    with engine.connect() as connection:
        return connection.exec_driver_sql("SELECT 1").scalar() == 1


def schema_current(engine: sa.Engine) -> bool:
    return stored_revision(engine) == NEWEST_REVISION
