"""`mailfathom import`, run as a new user runs it, over every source shape it accepts."""

from __future__ import annotations

import mailbox
import os
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from log_audit import register_headers
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mailfathom.adapters.sql.schema import messages
from mailfathom.app.reading.list_emails import TimelineRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.bootstrap import Services
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from mcp_tests.deployment import _free_port, _wait_for_port
from sync.workers import holders
from waiting import wait_for

READER = Caller(permissions=ALL_PERMISSIONS, label="reader")


def _samples(count: int, seed: int = 5) -> list[bytes]:
    raws = [s.raw for s in generate_mailbox(count, seed=seed, max_octets=4000, junk_folder=None)]
    for raw in raws:
        register_headers(raw)
    return raws


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{tmp_path / "data"}"\n\n'
        '[[Accounts]]\nId = "notes"\nKind = "local"\n'
        '[[Accounts.Folders]]\nRemote = "INBOX"\nRole = "Inbox"\n',
        "utf-8",
    )
    return config


def _tail(tmp_path: Path, source: Path) -> list[str]:
    return ["--config", str(_config(tmp_path)), "-a", "notes", str(source)]


def _import(tmp_path: Path, source: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mailfathom", "import", *_tail(tmp_path, source)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _stored(tmp_path: Path) -> int:
    engine = create_store_engine(sqlite_url(tmp_path / "data" / "mailfathom.sqlite3"))
    try:
        with engine.connect() as c:
            return int(c.execute(sa.select(sa.func.count()).select_from(messages)).scalar_one())
    finally:
        engine.dispose()


def _imports_all_once(tmp_path: Path, source: Path, expected: int) -> None:
    first = _import(tmp_path, source)
    assert first.returncode == 0, first.stderr
    assert _stored(tmp_path) == expected
    again = _import(tmp_path, source)
    assert again.returncode == 0, again.stderr
    assert _stored(tmp_path) == expected
    assert f"Imported {expected} new message(s)" in first.stdout
    assert "Imported 0 new message(s)" in again.stdout


def test_a_maildir_with_only_cur_imports(tmp_path: Path) -> None:
    source = tmp_path / "old"
    (source / "cur").mkdir(parents=True)
    for n, raw in enumerate(_samples(4)):
        (source / "cur" / f"{n}.host:2,S").write_bytes(raw)
    _imports_all_once(tmp_path, source, 4)


def test_a_complete_maildir_imports_each_message_once(tmp_path: Path) -> None:
    source = mailbox.Maildir(tmp_path / "old", create=True)
    for raw in _samples(5):
        source.add(mailbox.MaildirMessage(raw))
    _imports_all_once(tmp_path, tmp_path / "old", 5)


def test_a_folder_of_eml_files_imports(tmp_path: Path) -> None:
    source = tmp_path / "saved"
    source.mkdir()
    for n, raw in enumerate(_samples(3)):
        (source / f"message-{n}.eml").write_bytes(raw)
    _imports_all_once(tmp_path, source, 3)


def test_a_single_eml_file_imports(tmp_path: Path) -> None:
    source = tmp_path / "one.eml"
    source.write_bytes(_samples(1)[0])
    _imports_all_once(tmp_path, source, 1)


def test_an_mbox_imports_each_message_once(tmp_path: Path) -> None:
    source = mailbox.mbox(tmp_path / "old.mbox", create=True)
    for raw in _samples(6):
        source.add(mailbox.mboxMessage(raw))
    source.flush()
    _imports_all_once(tmp_path, tmp_path / "old.mbox", 6)


def test_the_same_bytes_under_another_name_are_not_imported_twice(tmp_path: Path) -> None:
    raw = _samples(1)[0]
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.eml").write_bytes(raw)
    (tmp_path / "b.eml").write_bytes(raw)
    assert _import(tmp_path, tmp_path / "a").returncode == 0
    again = _import(tmp_path, tmp_path / "b.eml")
    assert again.returncode == 0, again.stderr
    assert "Imported 0 new message(s)" in again.stdout
    assert _stored(tmp_path) == 1


def test_headers_are_imported_as_the_source_folded_them(tmp_path: Path) -> None:
    """A long header the source wrote on one line reaches the store exactly as written."""
    raw = _samples(1)[0]
    head, _, body = raw.partition(b"\n\n")
    long_line = b"X-Long: " + b" ".join([b"word"] * 40)
    raw = head + b"\n" + long_line + b"\n\n" + body
    source = mailbox.mbox(tmp_path / "old.mbox", create=True)
    source.add(mailbox.mboxMessage(raw))
    source.flush()
    assert _import(tmp_path, tmp_path / "old.mbox").returncode == 0
    folder = tmp_path / "data" / "local" / "notes" / "INBOX"
    held = [p.read_bytes() for p in folder.rglob("*") if p.is_file()]
    assert any(long_line in content for content in held)


def _not_mail(tmp_path: Path) -> list[Path]:
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    picture = tmp_path / "picture.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\nnot a message at all")
    return [tmp_path / "nowhere", empty_dir, picture]


@pytest.mark.parametrize("shape", [0, 1, 2], ids=["missing", "empty-folder", "not-mail-file"])
def test_a_source_that_is_not_mail_is_refused_with_its_own_code(tmp_path: Path, shape: int) -> None:
    source = _not_mail(tmp_path)[shape]
    result = _import(tmp_path, source)
    assert result.returncode == 2
    assert "MailFathom error 11003" in result.stderr
    assert "PNG" not in result.stderr
    assert "Traceback" not in result.stderr


def _listed(tmp_path: Path, after: datetime, before: datetime) -> list[str | None]:
    deployment = load_config(_config(tmp_path))
    with Services.open(deployment) as services:
        page = services.reading().timeline.read(
            READER,
            TimelineRequest(
                SelectionInput(received_on_or_after=after, received_before=before),
                page_size=100,
            ),
        )
        return [e.subject for e in page.emails]


@pytest.mark.parametrize(
    ("name", "first_hop"),
    [
        # Date: says 13:40:44 and the top-most Received: 13:41:01.
        ("00001.eml", datetime(2005, 1, 1, 13, 40, 45, tzinfo=UTC)),
        # Date: says 07:49:12 on the 13th, nine hours after the first hop.
        ("00103.eml", datetime(2005, 1, 12, 22, 28, 7, tzinfo=UTC)),
    ],
)
def test_imported_mail_keeps_its_received_time(
    tmp_path: Path, corpora: Path, name: str, first_hop: datetime
) -> None:
    """A 2005 list message, copied today, is listed as received in 2005: at the time of the
    first hop its bottom-most Received: header records, not at the time of import."""
    source = tmp_path / name
    shutil.copyfile(corpora / "messages" / "linux-mips-2005" / name, source)
    register_headers(source.read_bytes())
    result = _import(tmp_path, source)
    assert result.returncode == 0, result.stderr
    assert len(_listed(tmp_path, first_hop, first_hop + timedelta(seconds=1))) == 1
    assert _listed(tmp_path, datetime(2005, 1, 1, tzinfo=UTC), first_hop) == []
    later = _listed(tmp_path, first_hop + timedelta(seconds=1), datetime(2100, 1, 1, tzinfo=UTC))
    assert later == []


def test_an_mbox_message_is_received_at_its_from_line_time(tmp_path: Path) -> None:
    raw = _samples(1)[0]
    message = mailbox.mboxMessage(raw)
    message.set_from("someone@example.org", (2004, 6, 7, 8, 9, 10, 0, 1, 0))
    source = mailbox.mbox(tmp_path / "old.mbox", create=True)
    source.add(message)
    source.flush()
    assert _import(tmp_path, tmp_path / "old.mbox").returncode == 0
    at = datetime(2004, 6, 7, 8, 9, 10, tzinfo=UTC)
    assert len(_listed(tmp_path, at, datetime(2004, 6, 7, 8, 9, 11, tzinfo=UTC))) == 1


def test_a_maildir_message_is_received_at_its_file_time(tmp_path: Path) -> None:
    """Without a Received: header, a Maildir file's own time is the message's arrival."""
    raw = b"".join(
        line
        for line in _samples(1)[0].splitlines(keepends=True)
        if not line.lower().startswith(b"received:")
    )
    source = tmp_path / "old"
    (source / "new").mkdir(parents=True)
    path = source / "new" / "1.host"
    path.write_bytes(raw)
    when = datetime(2003, 3, 3, 3, 3, 3, tzinfo=UTC).timestamp()
    os.utime(path, (when, when))
    assert _import(tmp_path, source).returncode == 0
    found = _listed(
        tmp_path,
        datetime(2003, 3, 3, 3, 3, 3, tzinfo=UTC),
        datetime(2003, 3, 3, 3, 3, 4, tzinfo=UTC),
    )
    assert len(found) == 1


def _by_sent_time(tmp_path: Path, start: datetime, end: datetime) -> tuple[list[str], list[str]]:
    """The subjects list_emails and search_emails ("linux") find sent in [start, end)."""
    deployment = load_config(_config(tmp_path))
    selection = SelectionInput(sent_on_or_after=start, sent_before=end)
    with Services.open(deployment) as services:
        reading = services.reading()
        page = reading.timeline.read(READER, TimelineRequest(selection, page_size=100))
        found = reading.search.search(READER, SearchRequest("linux", selection, 50))
    return (
        sorted(e.subject or "" for e in page.emails),
        sorted(m.summary.subject or "" for m in found.matches),
    )


def test_imported_mail_is_found_by_the_year_its_date_header_gives(
    tmp_path: Path, corpora: Path
) -> None:
    """Two 2005 list messages (sent 1 January and 11 December) are found by a 2005 sent-time
    filter, listed and searched alike, and by no 2006 one."""
    source = tmp_path / "list"
    source.mkdir()
    for name in ("00001.eml", "02896.eml"):
        shutil.copyfile(corpora / "messages" / "linux-mips-2005" / name, source / name)
        register_headers((source / name).read_bytes())
    result = _import(tmp_path, source)
    assert result.returncode == 0, result.stderr
    year_2005 = datetime(2005, 1, 1, tzinfo=UTC), datetime(2006, 1, 1, tzinfo=UTC)
    listed, searched = _by_sent_time(tmp_path, *year_2005)
    assert len(listed) == 2
    assert searched == listed
    year_2006 = datetime(2006, 1, 1, tzinfo=UTC), datetime(2007, 1, 1, tzinfo=UTC)
    assert _by_sent_time(tmp_path, *year_2006) == ([], [])
    # The first one's Date: is 14:40:44 +0100: the bound is that instant, not its wall clock.
    sent_first = datetime(2005, 1, 1, 13, 40, 44, tzinfo=UTC)
    assert len(_by_sent_time(tmp_path, sent_first, sent_first + timedelta(seconds=1))[0]) == 1
    assert _by_sent_time(tmp_path, year_2005[0], sent_first) == ([], [])


def test_an_import_beside_a_running_serve_is_stored_by_that_serve(tmp_path: Path) -> None:
    """`serve` holds the account's lease, so the import's own pass is refused: the mail is
    filed all the same, the import ends as done, and the running `serve` stores it once."""
    config = _config(tmp_path)
    config.write_text(
        config.read_text("utf-8")
        + '\n[McpEndpoint]\nEnabled = true\n\n[[McpEndpoint.Callers]]\nName = "local"\n'
        'Credential = "none"\n',
        "utf-8",
    )
    port = _free_port()
    argv = [sys.executable, "-m", "mailfathom", "serve", "--config", str(config)]
    serving = subprocess.Popen(
        [*argv, "--port", str(port)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for_port(port, serving, timeout=180)
        engine = create_store_engine(sqlite_url(tmp_path / "data" / "mailfathom.sqlite3"))
        try:
            wait_for(lambda: holders(engine).get("notes"), "serve holds the account")
        finally:
            engine.dispose()
        source = tmp_path / "saved.mbox"
        box = mailbox.mbox(source)
        for raw in _samples(3):
            box.add(mailbox.mboxMessage(raw))
        box.close()
        done = subprocess.run(
            [*argv[:3], "import", "--config", str(config), "-a", "notes", str(source)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "Imported 3 new message(s)" in done.stdout
        assert "31008" not in done.stderr
        wait_for(lambda: _stored(tmp_path) == 3, "serve stored the imported mail")
    finally:
        os.killpg(serving.pid, signal.SIGKILL)
        serving.wait()
