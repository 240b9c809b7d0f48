"""Every message of the shared corpora, through a real Dovecot server and into the store.

Each file under ``<corpora>/messages/`` is one message, except a file whose first line
starts with ``From `` which is an mbox and is split into its messages. Every message is
APPENDed, octets unchanged, to a fresh Dovecot user; what the server refuses is recorded
with its reason. The mailbox is then synchronized into SQLite, and separately into
PostgreSQL. Each store must hold every accepted message exactly once and nothing else; its
content file must hold exactly the octets the server serves for the UID, and its columns
and body text must be what the normalizer makes of those octets. A second pass must fetch
no body.

The Dovecot user is loaded once per module and only read afterwards, so both stores are
compared against the same mailbox.
"""

from __future__ import annotations

import contextlib
import imaplib
import mailbox
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from log_audit import register_headers
from mailfathom.adapters.mime import normalize_message
from mailfathom.adapters.sql.rows import derived_values
from mailfathom.adapters.sql.schema import message_bodies, messages
from mailfathom.bootstrap import Services
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.content_state import ContentState
from servers.dovecot import DovecotServer, ImapAccount

from .helpers import imap_account_config, open_services, stored_rows, uid_fetch

pytestmark = pytest.mark.corpus

# Messages per IMAP folder: large corpora are spread over several folders so that the
# appends can run on parallel connections (Dovecot's per-message fsync dominates).
FOLDER_CAPACITY = 400
APPEND_CONNECTIONS = 8
VERIFY_CHUNK = 200
SOCKET_TIMEOUT_SECONDS = 60.0

_APPENDUID = re.compile(rb"\[APPENDUID (\d+) (\d+)\]")
_SERVER_TIMING = re.compile(r"\s*\([\d.]+(?: \+ [\d.]+)* secs\)\.?\s*$")


@dataclass(frozen=True, slots=True)
class CorpusMessage:
    """One message of the corpora: its file (``path#n`` for the n-th of an mbox)."""

    source: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class Appended:
    source: str
    folder: str
    uidvalidity: int
    uid: int


@dataclass(frozen=True, slots=True)
class Refused:
    source: str
    folder: str
    octets: int
    reason: str


@dataclass(frozen=True, slots=True)
class LoadedMailbox:
    account: ImapAccount
    folders: tuple[str, ...]
    appended: tuple[Appended, ...]
    refused: tuple[Refused, ...]
    files: int
    append_seconds: float


# -- reading the corpora -------------------------------------------------------------------


def corpus_messages(root: Path) -> Iterator[CorpusMessage]:
    """Every message under ``root``, in path order; mbox files yield each of their messages."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        if not raw.startswith(b"From "):
            yield CorpusMessage(name, raw)
            continue
        box = mailbox.mbox(path, create=False)
        try:
            for index, key in enumerate(box.keys()):
                yield CorpusMessage(f"{name}#{index}", box.get_bytes(key))
        finally:
            box.close()


def plan_folders(root: Path) -> dict[str, list[CorpusMessage]]:
    """Folder name -> its messages: one or more folders per corpus subdirectory."""
    by_corpus: dict[str, list[CorpusMessage]] = {}
    for message in corpus_messages(root):
        by_corpus.setdefault(message.source.split("/", 1)[0], []).append(message)
    plan: dict[str, list[CorpusMessage]] = {}
    for corpus, items in by_corpus.items():
        for part, start in enumerate(range(0, len(items), FOLDER_CAPACITY), start=1):
            plan[f"{corpus}-{part:02d}"] = items[start : start + FOLDER_CAPACITY]
    return plan


# -- talking to Dovecot --------------------------------------------------------------------


def connect(account: ImapAccount) -> imaplib.IMAP4:
    conn = imaplib.IMAP4(account.host, account.port, timeout=SOCKET_TIMEOUT_SECONDS)
    conn.login(account.username, account.password)
    return conn


def append_verbatim(conn: imaplib.IMAP4, folder: str, raw: bytes) -> tuple[str, bytes]:
    """APPEND ``raw`` exactly as it is.

    ``IMAP4.append`` rewrites every line ending to CRLF first; here the server gets the
    corpus octets unchanged (bare LF, bare CR, NUL and all) and decides for itself.
    """
    conn.literal = raw  # type: ignore[assignment]
    typ, data = conn._simple_command("APPEND", folder)
    text = data[-1] if data and isinstance(data[-1], bytes) else b""
    return typ, text


def _reason(text: bytes | str) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return _SERVER_TIMING.sub("", text).strip() or "(no reason given)"


def append_folder(
    account: ImapAccount, folder: str, items: Sequence[CorpusMessage]
) -> tuple[list[Appended], list[Refused]]:
    appended: list[Appended] = []
    refused: list[Refused] = []
    conn = connect(account)
    try:
        typ, data = conn.create(folder)
        assert typ == "OK", (folder, data)
        for item in items:
            try:
                typ, text = append_verbatim(conn, folder, item.raw)
            except imaplib.IMAP4.abort as exc:
                # The server dropped the connection over this message: a refusal too.
                refused.append(Refused(item.source, folder, len(item.raw), _reason(str(exc))))
                conn = connect(account)
                continue
            except imaplib.IMAP4.error as exc:  # a BAD answer
                refused.append(Refused(item.source, folder, len(item.raw), _reason(str(exc))))
                continue
            if typ != "OK":
                refused.append(Refused(item.source, folder, len(item.raw), _reason(text)))
                continue
            found = _APPENDUID.search(text)
            assert found, f"APPEND of {item.source} answered without APPENDUID: {text!r}"
            appended.append(Appended(item.source, folder, int(found.group(1)), int(found.group(2))))
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            conn.logout()
    return appended, refused


def server_bodies(
    account: ImapAccount, folder: str, uids: Sequence[int]
) -> Iterator[tuple[int, bytes]]:
    """(uid, BODY.PEEK[] octets) as the server serves them now."""
    conn = connect(account)
    try:
        typ, data = conn.select(folder, readonly=True)
        assert typ == "OK", (folder, data)
        ordered = sorted(uids)
        for start in range(0, len(ordered), VERIFY_CHUNK):
            chunk = ",".join(str(u) for u in ordered[start : start + VERIFY_CHUNK])
            for uid, items in sorted(uid_fetch(conn, chunk, "UID BODY.PEEK[]").items()):
                yield uid, items[b"BODY[]"]
    finally:
        conn.logout()


# -- the loaded mailbox --------------------------------------------------------------------


@pytest.fixture(scope="module")
def loaded_mailbox(dovecot: DovecotServer, corpora: Path) -> LoadedMailbox:
    root = corpora / "messages"
    files = sum(1 for p in root.rglob("*") if p.is_file())
    plan = plan_folders(root)
    suffix = uuid.uuid4().hex[:12]
    account = dovecot.add_user(f"corpus-{suffix}", f"pw-{suffix}")
    started = time.monotonic()
    with ThreadPoolExecutor(APPEND_CONNECTIONS) as pool:
        results = list(pool.map(lambda entry: append_folder(account, *entry), plan.items()))
    elapsed = time.monotonic() - started
    appended = tuple(a for done, _ in results for a in done)
    refused = tuple(r for _, rejected in results for r in rejected)
    print(
        f"\ncorpus: {files} files, {sum(len(v) for v in plan.values())} messages in "
        f"{len(plan)} folders; {len(appended)} appended, {len(refused)} refused, "
        f"append took {elapsed:.1f} s"
    )
    for reason, count in Counter(r.reason for r in refused).most_common():
        print(f"  refused x{count}: {reason}")
    for r in refused:
        print(f"    {r.source} ({r.octets} octets): {r.reason}")
    assert appended, "Dovecot accepted no message of the corpora"
    for messages_of_folder in plan.values():
        for corpus_message in messages_of_folder:
            register_headers(corpus_message.raw)
    return LoadedMailbox(account, tuple(plan), appended, refused, files, elapsed)


def corpus_account(loaded: LoadedMailbox) -> AccountConfig:
    return imap_account_config(
        loaded.account, folders=tuple(FolderMapping(f, f) for f in loaded.folders)
    )


# -- the checks ----------------------------------------------------------------------------

# Columns of `messages` that come from the MIME; `sent_at` is left out because each dialect
# returns timestamps in its own way (the store tests cover that).
_DERIVED_COLUMNS = tuple(
    c for c in derived_values(normalize_message(b"Subject: x\r\n\r\n")) if c != "sent_at"
)


@dataclass(frozen=True, slots=True)
class Verification:
    compared: int
    differing_content: tuple[str, ...]
    differing_columns: tuple[str, ...]
    seconds: float


def verify_against_server(
    services: Services,
    account_id: str,
    loaded: LoadedMailbox,
    rows: Sequence[sa.Row[Any]],
    alias_of: dict[int, str],
) -> Verification:
    """Compare every stored message with what the server serves for its UID now: the
    content file must hold exactly those octets, and the stored columns and body text (in
    the database or the content store) must be what the normalizer makes of them (the store
    neither refused nor altered anything)."""
    started = time.monotonic()
    source = {(a.folder, a.uid): a.source for a in loaded.appended}
    by_key = {(alias_of[r.folder_id], r.uid): r for r in rows}
    with services.engine.connect() as c:
        bodies = {
            seq: (plain, html)
            for seq, plain, html in c.execute(
                sa.select(
                    message_bodies.c.seq, message_bodies.c.plain_text, message_bodies.c.html
                ).where(
                    message_bodies.c.seq.in_(
                        sa.select(messages.c.seq).where(messages.c.account_id == account_id)
                    )
                )
            )
        }
    compared = 0
    differing_content: list[str] = []
    differing_columns: list[str] = []
    for folder in loaded.folders:
        uids = [uid for (f, uid) in by_key if f == folder]
        for uid, served in server_bodies(loaded.account, folder, uids):
            compared += 1
            row = by_key[(folder, uid)]
            if services.content.get(row.content_key) != served:
                differing_content.append(source[(folder, uid)])
            normalized = normalize_message(served)
            expected = derived_values(normalized)
            wrong = [c for c in _DERIVED_COLUMNS if getattr(row, c) != expected[c]]
            # A synchronization pass keeps the text beside the MIME, not in the database.
            text = bodies.get(row.seq) or services.content.get_text(row.content_key)
            if text != (normalized.plain_text, normalized.html):
                wrong.append("text")
            if wrong:
                differing_columns.append(f"{source[(folder, uid)]}: {', '.join(wrong)}")
    return Verification(
        compared, tuple(differing_content), tuple(differing_columns), time.monotonic() - started
    )


def synchronize_and_verify(
    tmp_path: Path, loaded: LoadedMailbox, body_fetches: list[int], database_url: str | None
) -> None:
    store_name = "PostgreSQL" if database_url else "SQLite"
    account = corpus_account(loaded)
    with open_services(tmp_path, account, database_url) as services:
        sync = services.account_synchronizer()
        started = time.monotonic()
        first = sync.run_once(account)
        sync_seconds = time.monotonic() - started
        assert first.missing_folders == ()

        records = {f.alias: f for f in services.overview.folders_of(account.account_id)}
        rows = stored_rows(services, account.account_id)
        alias_of = {r.folder_id: r.alias for r in records.values()}
        current = [r for r in rows if r.uidvalidity == records[alias_of[r.folder_id]].uidvalidity]

        # Every accepted message exactly once, under the UIDVALIDITY it was appended with,
        # and nothing else.
        for folder in loaded.folders:
            validities = {a.uidvalidity for a in loaded.appended if a.folder == folder}
            assert validities <= {records[folder].uidvalidity}, folder
        counts = Counter((alias_of[r.folder_id], r.uid) for r in current)
        missing = [a.source for a in loaded.appended if counts[(a.folder, a.uid)] == 0]
        doubled = [a.source for a in loaded.appended if counts[(a.folder, a.uid)] > 1]
        assert missing == [], f"{len(missing)} accepted messages not stored: {missing[:20]}"
        assert doubled == [], f"{len(doubled)} messages stored more than once: {doubled[:20]}"
        assert len(rows) == len(loaded.appended)
        assert sum(r.stored for r in first.folders) == len(loaded.appended)

        # No size limit or storage ceiling is in reach, so every message has its content.
        not_stored = [
            (alias_of[r.folder_id], r.uid, r.content_state)
            for r in rows
            if r.content_state != ContentState.STORED.value
        ]
        assert not_stored == []
        check = verify_against_server(services, account.account_id, loaded, rows, alias_of)
        assert check.compared == len(rows)
        assert check.differing_content == ()
        assert check.differing_columns == ()

        body_fetches.clear()
        started = time.monotonic()
        second = sync.run_once(account)
        resync_seconds = time.monotonic() - started
        assert body_fetches == []
        assert sum(r.fetched_bodies for r in second.folders) == 0
        assert len(stored_rows(services, account.account_id)) == len(loaded.appended)

    print(
        f"\n{store_name}: {len(rows)} messages synchronized in {sync_seconds:.1f} s "
        f"(append took {loaded.append_seconds:.1f} s for {len(loaded.appended)} accepted, "
        f"{len(loaded.refused)} refused); {check.compared} compared with the server "
        f"in {check.seconds:.1f} s; second pass {resync_seconds:.1f} s, no body fetched"
    )


def test_every_accepted_corpus_message_is_stored_once_in_sqlite_with_the_served_content(
    tmp_path: Path, loaded_mailbox: LoadedMailbox, body_fetches: list[int]
) -> None:
    synchronize_and_verify(tmp_path, loaded_mailbox, body_fetches, None)


def test_every_accepted_corpus_message_is_stored_once_in_postgresql_with_the_served_content(
    tmp_path: Path,
    loaded_mailbox: LoadedMailbox,
    body_fetches: list[int],
    migrated_postgres_url: str,
) -> None:
    synchronize_and_verify(tmp_path, loaded_mailbox, body_fetches, migrated_postgres_url)
