"""The `[Store]` section: where the data directory and the database are."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from urllib.parse import parse_qsl, urlsplit

from mailfathom.adapters.config.object_store_section import parse_object_store
from mailfathom.adapters.config.toml_tables import Problems, Table
from mailfathom.adapters.config.values import (
    HOME_UNKNOWN,
    config_path,
    expand_home,
    parse_enum,
    parse_secret,
)
from mailfathom.domain import text_rules
from mailfathom.domain.config import SecretRef, StoreConfig
from mailfathom.domain.content_storage import ContentStoreKind, ObjectStoreConfig

_STORE_KEYS = frozenset(
    {
        "DataDir",
        "DatabaseUrl",
        "DatabasePasswordSecret",
        "ContentStore",
        "ObjectStore",
        "Partitions",
    }
)
# As partitioning.MAX_PARTITIONS: the domain cannot import the adapter.
_MAX_PARTITIONS = 1024
_DATABASE_REFERENCE_HINT = 'give it with DatabasePasswordSecret = { Env = "VARIABLE" } instead'
_DRIVERLESS_POSTGRES = "postgresql"
_POSTGRES_SCHEME = "postgresql+psycopg"
_SQLITE_SCHEME = "sqlite"


def parse_store(table: Table | None, base_dir: Path, problems: Problems) -> StoreConfig | None:
    default_dir = base_dir / "data"
    if table is None:
        return StoreConfig(data_dir=default_dir)
    table.refuse_unknown(_STORE_KEYS, reference_hint=_DATABASE_REFERENCE_HINT)

    data_dir: Path | None = default_dir
    data_dir_text = table.string("DataDir")
    if data_dir_text is not None:
        data_dir = config_path(problems, table.at("DataDir"), data_dir_text, base_dir)

    secret: SecretRef | None = None
    if table.has("DatabasePasswordSecret"):
        secret = parse_secret(table, "DatabasePasswordSecret", base_dir)

    url: str | None = None
    url_text = table.string("DatabaseUrl")
    if url_text is not None:
        url = _parse_database_url(problems, table.at("DatabaseUrl"), url_text, base_dir)
    if table.has("DatabasePasswordSecret") and (
        not table.has("DatabaseUrl") or (url is not None and url.startswith(_SQLITE_SCHEME))
    ):
        problems.add(table.at("DatabasePasswordSecret"), "applies only to a PostgreSQL DatabaseUrl")

    partitions = table.integer("Partitions") or 0
    if not 0 <= partitions <= _MAX_PARTITIONS:
        problems.add(table.at("Partitions"), f"must be an integer from 0 to {_MAX_PARTITIONS}")
    elif partitions and (url is None or url.startswith(_SQLITE_SCHEME)):
        problems.add(table.at("Partitions"), "applies only to a PostgreSQL DatabaseUrl")

    kind, objects = _content_store(table, base_dir)
    if data_dir is None:
        return None
    return StoreConfig(
        data_dir=data_dir,
        database_url=url,
        database_password_secret=secret,
        content_store=kind,
        object_store=objects,
        partitions=partitions,
    )


def _content_store(
    table: Table, base_dir: Path
) -> tuple[ContentStoreKind, ObjectStoreConfig | None]:
    kind = parse_enum(table, "ContentStore", ContentStoreKind) or ContentStoreKind.PACKS
    objects_table = table.table("ObjectStore")
    if kind is ContentStoreKind.PACKS:
        if objects_table is not None:
            table.problems.add(table.at("ObjectStore"), 'applies only with ContentStore = "s3"')
        return kind, None
    if objects_table is None:
        table.problems.add(table.at("ObjectStore"), 'is required with ContentStore = "s3"')
        return kind, None
    return kind, parse_object_store(objects_table, base_dir)


def _parse_database_url(problems: Problems, path: str, text: str, base_dir: Path) -> str | None:
    if not text or any(char.isspace() for char in text) or not text_rules.is_name(text):
        problems.add(path, "must be a URL without spaces or control characters")
        return None
    try:
        parts = urlsplit(text)
        password = parts.password
        _ = parts.port
    except ValueError:
        problems.add(path, "is not a valid URL")
        return None
    scheme = parts.scheme.lower()
    # Everything after the scheme, kept verbatim: urlunsplit would drop the empty authority
    # of forms such as sqlite:///file.db or postgresql:///db.
    rest = text[len(parts.scheme) :]
    if not scheme or not rest.startswith("://"):
        problems.add(path, "is not a valid URL")
        return None
    query_keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if password is not None or "password" in query_keys:
        problems.add(path, f"must not contain a password; {_DATABASE_REFERENCE_HINT}")
        return None
    if parts.fragment:
        problems.add(path, "must not have a #fragment")
        return None

    if scheme in {_DRIVERLESS_POSTGRES, _POSTGRES_SCHEME}:
        # psycopg (version 3) is the PostgreSQL driver this product ships with.
        return _POSTGRES_SCHEME + rest

    if scheme == _SQLITE_SCHEME:
        if parts.netloc:
            problems.add(path, 'an SQLite URL has no host: write "sqlite:///relative/file.db"')
            return None
        # As in SQLAlchemy: sqlite:///name is relative, sqlite:////name absolute, and an
        # empty name or :memory: is an in-memory database.
        database = parts.path[1:]
        if database in {"", ":memory:"} or PurePosixPath(database).is_absolute():
            return _SQLITE_SCHEME + rest
        query = f"?{parts.query}" if parts.query else ""
        at_home = expand_home(database)
        if at_home is None:
            problems.add(path, HOME_UNKNOWN)
            return None
        if at_home != database:
            return f"{_SQLITE_SCHEME}:///{at_home}{query}"
        return f"{_SQLITE_SCHEME}:///{base_dir / database}{query}"

    problems.add(path, "must be an sqlite:// or postgresql+psycopg:// URL")
    return None
