"""Column types the schema shares."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa


class UtcDateTime(sa.types.TypeDecorator[datetime]):
    """An instant, stored in UTC and given back as an aware UTC datetime.

    SQLite keeps no zone with a timestamp, so a value is converted to UTC before it is
    written (on either database, so both hold the same) and read back as UTC. A datetime
    without a zone names no instant and is refused."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.utcoffset() is None:
            raise ValueError("a timestamp without a time zone names no instant")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)  # type: ignore[no-any-return]
        return value.astimezone(UTC)  # type: ignore[no-any-return]
