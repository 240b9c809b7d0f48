"""pytest fixtures for the real test servers and the shared corpora.

``tests/conftest.py`` re-exports these so every test module can use them.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mailfathom.adapters.sql import migrate, partitioning
from mailfathom.adapters.sql.engine import create_store_engine
from mailfathom.domain.connections import SecretRef
from mailfathom.domain.content_storage import ObjectStoreConfig

from .dovecot import DovecotServer, ImapAccount
from .model_provider import ModelProvider
from .oauth import OAuthServer
from .postgres import PostgresServer
from .s3 import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from .smtp import SmtpServer

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPORA_ENV = "MAILFATHOM_CORPORA"

# Fixture name -> marker that a test using it gets automatically.
FIXTURE_MARKERS = {
    "dovecot": "dovecot",
    "imap_account": "dovecot",
    "postgres_server": "postgres",
    "postgres_url": "postgres",
    "migrated_postgres_url": "postgres",
    "partitioned_postgres_url": "postgres",
    "corpora": "corpus",
    "oauth_server": "process",
    "oauth_dovecot": "dovecot",
    "oauth_imap_account": "dovecot",
    "oauth_smtp": "process",
    "model_provider": "process",
    "provider": "process",
    "s3_server": "process",
    "object_store": "process",
}


@pytest.fixture(scope="session")
def dovecot() -> Iterator[DovecotServer]:
    """One Dovecot server for the whole session, listening on 127.0.0.1."""
    server = DovecotServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def imap_account(dovecot: DovecotServer) -> ImapAccount:
    """A new IMAP user with an empty INBOX on the session's Dovecot server."""
    suffix = uuid.uuid4().hex[:12]
    return dovecot.add_user(f"user-{suffix}", f"pw-{suffix}")


@pytest.fixture(scope="session")
def oauth_server() -> Iterator[OAuthServer]:
    """One OAuth 2.0 / 2.1 authorization server (authlib) for the whole session, on
    127.0.0.1. Its settings are shared: a test that changes one (token lifetime, rotation,
    the subject authorizations are approved as) sets it back, or uses its own `OAuthServer`."""
    server = OAuthServer().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def oauth_dovecot(oauth_server: OAuthServer) -> Iterator[DovecotServer]:
    """A Dovecot server for the whole session that also accepts XOAUTH2 and OAUTHBEARER
    logins, validating the token by introspection at `oauth_server`."""
    server = DovecotServer(oauth=oauth_server).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def oauth_imap_account(oauth_dovecot: DovecotServer) -> ImapAccount:
    """A new user with an empty INBOX on `oauth_dovecot`: it logs in with a token whose
    subject is its `username` (see `OAuthServer.mint_access_token` and
    `servers.oauth.device_grant`), or with its password."""
    suffix = uuid.uuid4().hex[:12]
    return oauth_dovecot.add_user(f"user-{suffix}", f"pw-{suffix}")


@pytest.fixture
def oauth_smtp(oauth_server: OAuthServer) -> Iterator[SmtpServer]:
    """A test submission server offering XOAUTH2 and OAUTHBEARER beside PLAIN and LOGIN,
    validating tokens by introspection at `oauth_server`; its one password user is
    `sender@example.test` / `sender-password`."""
    server = SmtpServer({"sender@example.test": "sender-password"}, oauth=oauth_server).start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole session, listening on 127.0.0.1."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A SQLAlchemy URL (``postgresql+psycopg://``) of a new, empty database.

    The database is dropped after the test, with any connections still open to it.
    """
    name = f"t_{uuid.uuid4().hex[:16]}"
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)


@pytest.fixture(scope="session")
def migrated_postgres_template(postgres_server: PostgresServer) -> str:
    """The name of a database migrated to the newest schema once per session, which
    `migrated_postgres_url` copies. Nothing stays connected to it."""
    name = f"template_{uuid.uuid4().hex[:16]}"
    engine = create_store_engine(postgres_server.create_database(name))
    try:
        migrate.upgrade(engine)
    finally:
        engine.dispose()
    return name


@pytest.fixture
def migrated_postgres_url(
    postgres_server: PostgresServer, migrated_postgres_template: str
) -> Iterator[str]:
    """A SQLAlchemy URL of a new database at the newest schema and holding no mail: a copy
    of the session's migrated template, made by PostgreSQL (CREATE DATABASE ... TEMPLATE)
    instead of running every migration again. Dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    url = postgres_server.create_database(name, template=migrated_postgres_template)
    yield url
    postgres_server.drop_database(name)


PARTITIONS = 4
"""How many hash partitions the partitioned store of the tests has."""


@pytest.fixture(scope="session")
def partitioned_postgres_template(postgres_server: PostgresServer) -> str:
    """Like `migrated_postgres_template`, with the large tables partitioned by account
    (`partitioning.partition`, `PARTITIONS` partitions)."""
    name = f"template_{uuid.uuid4().hex[:16]}"
    engine = create_store_engine(postgres_server.create_database(name))
    try:
        migrate.upgrade(engine)
        partitioning.partition(engine, PARTITIONS)
    finally:
        engine.dispose()
    return name


@pytest.fixture
def partitioned_postgres_url(
    postgres_server: PostgresServer, partitioned_postgres_template: str
) -> Iterator[str]:
    """A new database at the newest schema, its message tables partitioned by account,
    holding no mail. Dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    url = postgres_server.create_database(name, template=partitioned_postgres_template)
    yield url
    postgres_server.drop_database(name)


@pytest.fixture(scope="session")
def corpora() -> Path:
    """The shared test corpora: ``../shared/corpora`` beside the repository, or
    ``$MAILFATHOM_CORPORA``. Skips the test when absent, except in CI where the
    corpora must be present."""
    override = os.environ.get(CORPORA_ENV)
    path = Path(override) if override else REPO_ROOT.parent / "shared" / "corpora"
    path = path.resolve()
    if not path.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"shared corpora not found at {path}: CI requires them "
                f"(set {CORPORA_ENV} to point elsewhere)",
                pytrace=False,
            )
        pytest.skip(f"shared corpora not found at {path}: corpus tests skipped")
    return path


def add_fixture_markers(items: list[pytest.Item]) -> None:
    """Mark each test with the markers of the server fixtures it uses, so that
    ``-m "not dovecot"`` and the like select tests without hand-written marks."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        for marker in sorted({FIXTURE_MARKERS[n] for n in names if n in FIXTURE_MARKERS}):
            item.add_marker(marker)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """One S3-compatible object store for the whole session, on 127.0.0.1."""
    server = S3Server().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def object_store(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> ObjectStoreConfig:
    """`[Store.ObjectStore]` for a new, empty bucket on the session's object store, its keys
    read from environment variables as a deployment's would be."""
    monkeypatch.setenv("MF_TEST_S3_ACCESS_KEY", ACCESS_KEY)
    monkeypatch.setenv("MF_TEST_S3_SECRET_KEY", SECRET_KEY)
    return ObjectStoreConfig(
        bucket=s3_server.new_bucket(),
        endpoint=s3_server.endpoint,
        region=REGION,
        prefix="mailfathom/",
        access_key_secret=SecretRef(env="MF_TEST_S3_ACCESS_KEY"),
        secret_key_secret=SecretRef(env="MF_TEST_S3_SECRET_KEY"),
        concurrency=4,
    )


@pytest.fixture(scope="session")
def model_provider() -> Iterator[ModelProvider]:
    """One OpenAI-compatible model provider (embeddings, chat completions with tools, models)
    for the whole session, on 127.0.0.1. Tests that script it use `provider`, which resets it."""
    server = ModelProvider().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def provider(model_provider: ModelProvider) -> Iterator[ModelProvider]:
    """The session's model provider, reset before and after the test: no script, no failure,
    no record, the starting models, the `echo` chat mode, no request still held. A test may
    `stop()` it to make its endpoint unreachable; it runs again after the test."""
    _restart_and_reset(model_provider)
    yield model_provider
    _restart_and_reset(model_provider)


def _restart_and_reset(server: ModelProvider) -> None:
    if server.running:
        server.reset()
    else:
        server.stop()
        server.start()
