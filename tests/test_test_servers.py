"""The real-server test harness works: Dovecot and PostgreSQL start and behave."""

from __future__ import annotations

import contextlib
import imaplib
import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from mailfathom.adapters.sql import migrate
from servers.dovecot import DovecotServer, ImapAccount
from servers.postgres import PostgresServer, sqlalchemy_to_conninfo

MESSAGE = (
    b"From: Alice <alice@example.org>\r\n"
    b"To: Bob <bob@example.org>\r\n"
    b"Subject: harness check\r\n"
    b"Message-ID: <harness-1@example.org>\r\n"
    b"Date: Mon, 02 Jan 2023 10:00:00 +0000\r\n"
    b"\r\n"
    b"Hello from the test harness.\r\n"
)


@pytest.fixture
def imap(imap_account: ImapAccount) -> Iterator[imaplib.IMAP4]:
    client = imaplib.IMAP4(imap_account.host, imap_account.port, timeout=20)
    try:
        client.login(imap_account.username, imap_account.password)
        yield client
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            client.logout()


def _select_uidvalidity(client: imaplib.IMAP4, folder: str = "INBOX") -> int:
    typ, _ = client.select(folder)
    assert typ == "OK"
    _, data = client.response("UIDVALIDITY")
    assert data[0] is not None
    return int(data[0])


def _uids(client: imaplib.IMAP4) -> list[int]:
    typ, data = client.uid("SEARCH", "ALL")
    assert typ == "OK"
    assert data[0] is not None
    return [int(uid) for uid in data[0].split()]


def test_dovecot_listens_on_loopback(dovecot: DovecotServer) -> None:
    assert dovecot.host == "127.0.0.1"
    assert dovecot.running
    assert dovecot.port > 0


def test_dovecot_capabilities_after_login(imap: imaplib.IMAP4) -> None:
    typ, data = imap.capability()
    assert typ == "OK"
    assert data[0] is not None
    capabilities = set(data[0].decode().upper().split())
    required = {"IMAP4REV1", "IDLE", "CONDSTORE", "QRESYNC", "UIDPLUS", "MOVE", "ESEARCH"}
    assert required <= capabilities


def test_append_and_fetch_round_trip(imap: imaplib.IMAP4) -> None:
    typ, data = imap.append("INBOX", None, None, MESSAGE)
    assert typ == "OK"
    assert data[0] is not None
    appenduid = re.search(rb"APPENDUID (\d+) (\d+)", data[0])
    assert appenduid is not None
    uid = int(appenduid.group(2))

    _select_uidvalidity(imap)
    typ, fetched = imap.uid("FETCH", str(uid), "(BODY.PEEK[])")
    assert typ == "OK"
    first = fetched[0]
    assert isinstance(first, tuple)
    assert first[1] == MESSAGE

    # PEEK must not have set \Seen.
    typ, flags = imap.uid("FETCH", str(uid), "(FLAGS)")
    assert typ == "OK"
    assert flags[0] is not None
    assert b"\\Seen" not in flags[0]


def test_new_accounts_are_distinct_and_empty(
    dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    other = dovecot.add_user(imap_account.username + "-b", "another-password")
    assert other.username != imap_account.username
    assert dovecot.mailbox_status(other.username)["messages"] == 0
    with pytest.raises(ValueError, match="already exists"):
        dovecot.add_user(other.username, "x")


def test_wrong_password_is_rejected(imap_account: ImapAccount) -> None:
    client = imaplib.IMAP4(imap_account.host, imap_account.port, timeout=20)
    try:
        with pytest.raises(imaplib.IMAP4.error):
            client.login(imap_account.username, imap_account.password + "-wrong")
    finally:
        client.shutdown()


def test_doveadm_changes_are_visible_over_imap(
    dovecot: DovecotServer, imap_account: ImapAccount, imap: imaplib.IMAP4
) -> None:
    user = imap_account.username
    dovecot.save_message(user, MESSAGE)
    dovecot.save_message(user, MESSAGE.replace(b"harness-1", b"harness-2"))
    dovecot.doveadm("flags", "add", "-u", user, "\\Flagged", "mailbox", "INBOX", "uid", "1")
    dovecot.doveadm("expunge", "-u", user, "mailbox", "INBOX", "uid", "2")

    _select_uidvalidity(imap)
    assert _uids(imap) == [1]
    typ, flags = imap.uid("FETCH", "1", "(FLAGS)")
    assert typ == "OK"
    assert flags[0] is not None
    assert b"\\Flagged" in flags[0]


def test_reset_uidvalidity_changes_uidvalidity_and_renumbers(
    dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    def connect() -> imaplib.IMAP4:
        client = imaplib.IMAP4(imap_account.host, imap_account.port, timeout=20)
        client.login(imap_account.username, imap_account.password)
        return client

    client = connect()
    for n in range(3):
        client.append("INBOX", None, None, MESSAGE.replace(b"harness-1", b"r-%d" % n))
    before = _select_uidvalidity(client)
    client.uid("STORE", "1", "+FLAGS.SILENT", "(\\Deleted)")
    client.uid("STORE", "2", "+FLAGS.SILENT", "(\\Seen)")
    client.expunge()
    assert _uids(client) == [2, 3]

    # The session is still open: the reset closes it, as a server rebuild would.
    new = dovecot.reset_uidvalidity(imap_account.username)
    assert new != before
    with pytest.raises((imaplib.IMAP4.abort, OSError)):
        client.noop()

    client = connect()
    try:
        assert _select_uidvalidity(client) == new
        # The two remaining messages are renumbered from 1; flags survive.
        assert _uids(client) == [1, 2]
        typ, data = client.uid("FETCH", "1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
        assert typ == "OK"
        parts = [item for item in data if isinstance(item, tuple)]
        assert [b"<r-1@example.org>" in p[1] for p in parts] == [True, False]
        assert b"\\Seen" in parts[0][0]
    finally:
        client.logout()


def test_reset_uidvalidity_of_a_subfolder(
    dovecot: DovecotServer, imap_account: ImapAccount
) -> None:
    user = imap_account.username
    folder = "Archive/2023.01 Café"
    dovecot.create_folder(user, folder)
    dovecot.save_message(user, MESSAGE, folder)
    inbox_before = dovecot.uidvalidity(user)
    before = dovecot.uidvalidity(user, folder)
    after = dovecot.reset_uidvalidity(user, folder)
    assert after != before
    assert dovecot.uidvalidity(user, folder) == after
    assert dovecot.uidvalidity(user) == inbox_before
    assert dovecot.mailbox_status(user, folder)["messages"] == 1


def test_postgres_select_one(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql+psycopg://mailfathom@127.0.0.1:")
    with psycopg.connect(sqlalchemy_to_conninfo(postgres_url), connect_timeout=10) as conn:
        row = conn.execute("SELECT 1").fetchone()
    assert row == (1,)


def test_postgres_databases_are_distinct(postgres_server: PostgresServer) -> None:
    first = postgres_server.create_database("harness_a")
    second = postgres_server.create_database("harness_b")
    try:
        assert first != second
        with psycopg.connect(sqlalchemy_to_conninfo(first), autocommit=True) as conn:
            conn.execute("CREATE TABLE only_in_a (x int)")
        with psycopg.connect(sqlalchemy_to_conninfo(second)) as conn:
            row = conn.execute("SELECT to_regclass('only_in_a') IS NULL").fetchone()
            assert row == (True,)
    finally:
        postgres_server.drop_database("harness_a")
        postgres_server.drop_database("harness_b")


def test_postgres_url_fixture_gives_a_fresh_database(postgres_url: str) -> None:
    with psycopg.connect(sqlalchemy_to_conninfo(postgres_url)) as conn:
        row = conn.execute(
            "SELECT current_database(), count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone()
    assert row is not None
    assert row[0] == postgres_url.rsplit("/", 1)[1]
    assert row[1] == 0


def test_migrated_postgres_url_gives_a_fresh_copy_at_the_newest_schema(
    migrated_postgres_url: str, migrated_postgres_template: str, postgres_url: str
) -> None:
    with psycopg.connect(sqlalchemy_to_conninfo(migrated_postgres_url), autocommit=True) as conn:
        version = conn.execute("SELECT version_num FROM alembic_version").fetchall()
        assert version == [(migrate.NEWEST_REVISION,)]
        assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
        conn.execute(
            "INSERT INTO accounts (account_id, display_name, kind, created_at) "
            "VALUES ('a', 'A', 'imap', now())"
        )
    name = migrated_postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(sqlalchemy_to_conninfo(postgres_url)) as conn:
        copies = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'template\\_%'"
        ).fetchall()
    # The session's template is copied, not handed out (the partitioned layout has its own).
    assert migrated_postgres_template in {c[0] for c in copies}
    assert name != migrated_postgres_template


def test_fixture_markers_are_applied(
    request: pytest.FixtureRequest, imap_account: ImapAccount, postgres_url: str
) -> None:
    names = {marker.name for marker in request.node.iter_markers()}
    assert {"dovecot", "postgres"} <= names


def test_corpora_fixture_points_at_a_directory(corpora: Path) -> None:
    assert corpora.is_dir()


@pytest.mark.dovecot
@pytest.mark.postgres
def test_standalone_servers_stop_cleanly() -> None:
    with DovecotServer() as server:
        root = server.root
        assert server.running
    assert not root.exists()
    assert not server.running
    with PostgresServer() as pg:
        pg_root = pg.root
        pid = pg.pid
        assert pg.running
    assert pid is not None
    assert not pg_root.exists()
    assert not pg.running
