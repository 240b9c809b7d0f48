"""The command line, run as a user runs it."""

from __future__ import annotations

import hashlib
import mailbox
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from log_audit import register_headers
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import messages


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _count(database: Path, **where: object) -> int:
    engine = create_store_engine(sqlite_url(database))
    try:
        with engine.connect() as c:
            query = sa.select(sa.func.count()).select_from(messages)
            for column, value in where.items():
                query = query.where(messages.c[column] == value)
            return int(c.execute(query).scalar_one())
    finally:
        engine.dispose()


def test_demo_generates_and_stores_a_mailbox_and_is_repeatable(tmp_path: Path) -> None:
    for sample in generate_mailbox(12):
        register_headers(sample.raw)
    first = _run(
        "demo", "--no-serve", "--data-dir", str(tmp_path / "demo"), "--messages", "12", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    database = tmp_path / "demo" / "data" / "mailfathom.sqlite3"
    assert _count(database) == 12
    again = _run(
        "demo", "--no-serve", "--data-dir", str(tmp_path / "demo"), "--messages", "12", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert _count(database) == 12
    key = (tmp_path / "demo" / "demo-api-key").read_text("ascii").strip()
    # Both runs print the same key, the endpoint, and client configurations for both transports.
    for run in (first, again):
        assert f"API key: {key}" in run.stdout
        assert "http://127.0.0.1:8625/mcp" in run.stdout
        assert '"--stdio"' in run.stdout
    config_text = (tmp_path / "demo" / "mailfathom.toml").read_text("utf-8")
    assert key not in config_text
    assert hashlib.sha256(key.encode()).hexdigest() in config_text
    listing = _run("accounts", "--config", str(tmp_path / "demo" / "mailfathom.toml"), cwd=tmp_path)
    assert listing.returncode == 0
    assert "INBOX" in listing.stdout
    assert "never" not in listing.stdout


def test_a_configuration_error_names_the_key_and_starts_nothing(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[[Accounts]]\nId = "x"\nKind = "imap"\n', "utf-8")
    result = _run("sync", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "Accounts[0].Imap" in result.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("sync", b"work\x1b[31mRED"),
        ("sync", "work\u2028next".encode()),
        ("sync", b"work\xffbyte"),
        ("sync", "work\x85nel".encode()),
        ("import", b"work\x1b[31mRED"),
    ],
    ids=["escape", "line-separator", "undecodable", "nel", "import-escape"],
)
def test_an_account_name_breaking_the_text_rule_is_refused_without_repeating_it(
    tmp_path: Path, command: str, name: bytes
) -> None:
    """An account named on the command line is repeated back only when it is a name at all:
    a terminal escape or a byte that is not UTF-8 never reaches the operator's terminal."""
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n\n[[Accounts]]\nId = "work"\n'
        'Kind = "local"\nAddresses = ["me@example.org"]\n\n[[Accounts.Folders]]\n'
        'Remote = "INBOX"\n',
        "utf-8",
    )
    tail = [str(tmp_path)] if command == "import" else []
    argv = [sys.executable, "-m", "mailfathom", command, "--config", str(config)]
    argv += ["--account", os.fsdecode(name), *tail]
    result = subprocess.run(
        [os.fsencode(a) for a in argv], cwd=tmp_path, capture_output=True, timeout=300, check=False
    )
    assert result.returncode == 2
    assert b"MailFathom error 11001" in result.stderr
    assert b"RED" not in result.stderr
    assert b"next" not in result.stderr
    assert b"byte" not in result.stderr
    assert b"nel" not in result.stderr
    assert b"\x1b" not in result.stderr


def test_import_loads_a_maildir_and_an_mbox_into_a_local_account(tmp_path: Path) -> None:
    samples = list(generate_mailbox(12, seed=3, max_octets=4000, junk_folder=None))
    for sample in samples:
        register_headers(sample.raw)
    source_dir = mailbox.Maildir(tmp_path / "old-maildir", create=True)
    for sample in samples[:7]:
        message = mailbox.MaildirMessage(sample.raw)
        message.set_flags("S")
        source_dir.add(message)
    source_mbox = mailbox.mbox(tmp_path / "old.mbox", create=True)
    for sample in samples[7:]:
        source_mbox.add(mailbox.mboxMessage(sample.raw))
    source_mbox.flush()
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        '[[Accounts]]\nId = "notes"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n'
        '[[Accounts.Folders]]\nRemote = "Old"\n',
        "utf-8",
    )
    first = _run(
        "import",
        "--config",
        str(config),
        "-a",
        "notes",
        str(tmp_path / "old-maildir"),
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    second = _run(
        "import",
        "--config",
        str(config),
        "-a",
        "notes",
        "-f",
        "Old",
        str(tmp_path / "old.mbox"),
        cwd=tmp_path,
    )
    assert second.returncode == 0, second.stderr
    database = tmp_path / "data" / "mailfathom.sqlite3"
    assert _count(database) == 12
    assert _count(database, seen=True) == 7


def test_rederive_rebuilds_conversations_of_stored_mail(tmp_path: Path) -> None:
    assert (
        _run(
            "demo",
            "--no-serve",
            "--data-dir",
            str(tmp_path / "d"),
            "--messages",
            "40",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    database = tmp_path / "d" / "data" / "mailfathom.sqlite3"
    engine = create_store_engine(sqlite_url(database))
    with engine.begin() as c:
        before = dict(c.execute(sa.select(messages.c.seq, messages.c.thread_id)).all())
        c.execute(messages.update().values(thread_id=None, thread_position=None))
    result = _run(
        "mailbox", "rederive", "--config", str(tmp_path / "d" / "mailfathom.toml"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    with engine.connect() as c:
        after = dict(c.execute(sa.select(messages.c.seq, messages.c.thread_id)).all())
    engine.dispose()
    assert None not in after.values()
    groups_before = {frozenset(s for s, t in before.items() if t == tid) for tid in before.values()}
    groups_after = {frozenset(s for s, t in after.items() if t == tid) for tid in after.values()}
    assert groups_after == groups_before


def test_verify_queues_damaged_copies_and_sweeps_what_killed_writers_left(tmp_path: Path) -> None:
    for sample in generate_mailbox(30):
        register_headers(sample.raw)
    home = tmp_path / "demo"
    made = _run("demo", "--no-serve", "--data-dir", str(home), "--messages", "30", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    config = str(home / "mailfathom.toml")
    database = home / "data" / "mailfathom.sqlite3"
    engine = create_store_engine(sqlite_url(database))
    try:
        with engine.connect() as c:
            key = (
                c.execute(
                    sa.select(messages.c.content_key).where(messages.c.content_key.is_not(None))
                )
                .scalars()
                .first()
            )
    finally:
        engine.dispose()
    assert key is not None
    content = PackContentStore(home / "data" / "content")
    location = content.locate(key)
    content.close()
    assert location is not None
    with location.path.open("r+b") as pack:
        pack.seek(location.offset)
        pack.write(b"\x00")
    orphan = home / "data" / "content" / "packs" / ("f" * 32 + ".pack")
    orphan.write_bytes(b"a record nobody indexed")
    os.utime(orphan, (1, 1))

    checked = _run("mailbox", "verify", "--config", config, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "Removed 1 left-over or compacted content file(s)." in checked.stdout
    assert "demo: 1 stored message(s) queued for repair" in checked.stdout
    held = _count(database, account_id="demo") - _count(
        database, account_id="demo", content_key=None
    )
    assert held > 1
    assert f"demo: 1 stored message(s) queued for repair, of {held} checked" in checked.stdout
    assert not orphan.exists()

    repaired = _run("sync", "--config", config, cwd=tmp_path)
    assert repaired.returncode == 0, repaired.stderr
    again = _run("mailbox", "verify", "--config", config, cwd=tmp_path)
    assert "demo: 0 stored message(s) queued for repair" in again.stdout
