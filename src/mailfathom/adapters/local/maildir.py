"""Local accounts: mailboxes that live only in this deployment, kept as Maildir folders.

A local account is synchronized through the same `MailboxSession` port as an IMAP account, so
every message reaches the store by one path. Each folder is a Maildir (cur/new/tmp) under
`<data dir>/local/<account id>/<folder>`; UIDs are assigned the way an IMAP server assigns them
— ascending, never reused — and kept with a UIDVALIDITY in a small list file beside it.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import socket
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from mailfathom.adapters.local.watch import MaildirWatch
from mailfathom.app.sync.types import (
    ChangeSet,
    EnvelopeItem,
    FetchedMessage,
    FlagChange,
    FolderStatus,
)
from mailfathom.domain.config import AccountConfig
from mailfathom.domain.content_state import RemoteFlags
from mailfathom.domain.errors import SyncError
from mailfathom.domain.identifiers import parse_msg_ids

_UID_FILE = ".mailfathom-uids"
_FLAG_LETTERS = {
    "S": "\\Seen",
    "F": "\\Flagged",
    "R": "\\Answered",
    "D": "\\Draft",
    "T": "\\Deleted",
}


def _base(name: str) -> str:
    return name.split(":2,", 1)[0]


def _flags_of(name: str) -> RemoteFlags:
    info = name.split(":2,", 1)[1] if ":2," in name else ""
    return RemoteFlags.from_names([_FLAG_LETTERS[c] for c in info if c in _FLAG_LETTERS])


def _set_arrival(path: Path, received_at: datetime | None) -> None:
    """Give a delivered file the message's arrival time, which a scan reads back."""
    if received_at is not None:
        instant = received_at.timestamp()
        os.utime(path, (instant, instant))


class MaildirFolder:
    def __init__(self, path: Path) -> None:
        self.path = path

    def create(self) -> None:
        for sub in ("cur", "new", "tmp"):
            (self.path / sub).mkdir(parents=True, exist_ok=True)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.create()
        with open(self.path / ".lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def deliver(self, raw: bytes, flags: str = "", received_at: datetime | None = None) -> str:
        """Write one message (Maildir delivery: tmp, then an atomic link into new or cur).
        `received_at`, when given, becomes the file's time; otherwise it is now."""
        self.create()
        unique = f"{time.time_ns()}.{os.getpid()}_{secrets.token_hex(6)}.{socket.gethostname()}"
        tmp = self.path / "tmp" / unique
        with open(tmp, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        _set_arrival(tmp, received_at)
        target = (
            self.path
            / ("cur" if flags else "new")
            / (f"{unique}:2,{''.join(sorted(flags))}" if flags else unique)
        )
        os.replace(tmp, target)
        return unique

    def deliver_once(
        self, raw: bytes, name: str, flags: str = "", received_at: datetime | None = None
    ) -> bool:
        """Deliver under a name of the caller's choosing, unless a message of that name is
        already here (in new/ or, with any flags, in cur/): a delivery repeated after a crash
        leaves one message. Answers whether this call delivered it. `received_at` becomes the
        file's time, which synchronization reads as the message's arrival."""
        if not name or any(ch in name for ch in "/:\x00") or name.startswith("."):
            raise ValueError("not a Maildir file name")
        with self._locked():
            if (self.path / "new" / name).exists() or any(
                _base(entry.name) == name for entry in os.scandir(self.path / "cur")
            ):
                return False
            tmp = self.path / "tmp" / name
            with open(tmp, "wb") as handle:
                handle.write(raw)
                handle.flush()
                os.fsync(handle.fileno())
            _set_arrival(tmp, received_at)
            target = (
                self.path
                / ("cur" if flags else "new")
                / (f"{name}:2,{''.join(sorted(flags))}" if flags else name)
            )
            os.replace(tmp, target)
            directory = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
            return True

    def reflag(self, path: Path, letter: str, present: bool) -> Path | None:
        """Set or clear one flag letter of a message file, moving it into cur/ as Maildir
        does; None when the file is gone."""
        info = path.name.split(":2,", 1)[1] if ":2," in path.name else ""
        letters = (set(info) | {letter}) if present else (set(info) - {letter})
        target = self.path / "cur" / f"{_base(path.name)}:2,{''.join(sorted(letters))}"
        with self._locked():
            try:
                os.rename(path, target)
            except FileNotFoundError:
                return None
        return target

    def scan(self) -> tuple[int, dict[int, Path]]:
        """Assign UIDs to files seen for the first time; return (uidvalidity, uid -> path)."""
        with self._locked():
            uid_file = self.path / _UID_FILE
            uidvalidity = int(time.time())
            assigned: dict[str, int] = {}
            next_uid = 1
            if uid_file.exists():
                lines = uid_file.read_text("ascii").splitlines()
                header = lines[0].split()
                uidvalidity, next_uid = int(header[0]), int(header[1])
                for line in lines[1:]:
                    uid_text, base = line.split(" ", 1)
                    assigned[base] = int(uid_text)
            present: dict[str, Path] = {}
            for sub in ("new", "cur"):
                for entry in os.scandir(self.path / sub):
                    if entry.is_file() and not entry.name.startswith("."):
                        present[_base(entry.name)] = Path(entry.path)
            fresh = sorted(b for b in present if b not in assigned)
            for base in fresh:
                assigned[base] = next_uid
                next_uid += 1
            kept = {b: u for b, u in assigned.items() if b in present}
            if fresh or len(kept) != len(assigned) or not uid_file.exists():
                body = "".join(f"{u} {b}\n" for b, u in sorted(kept.items(), key=lambda x: x[1]))
                tmp = uid_file.with_suffix(".tmp")
                tmp.write_text(f"{uidvalidity} {next_uid}\n{body}", "ascii")
                os.replace(tmp, uid_file)
            self._next_uid = next_uid
            return uidvalidity, {u: present[b] for b, u in kept.items()}

    def take(self, path: Path) -> str | None:
        """Move a message file of another folder into this one under the same name, in the
        same subdirectory (new or cur): one rename, so the message is in exactly one of the
        two folders at every moment. Answers its base name, or None when the file is gone."""
        self.create()
        with self._locked():
            try:
                os.rename(path, self.path / path.parent.name / path.name)
            except FileNotFoundError:
                return None
        return _base(path.name)

    def uid_next(self) -> int:
        """The UID the next new file will get (after a scan)."""
        self.scan()
        return self._next_uid


class LocalConnector:
    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir

    def account_root(self, account_id: str) -> Path:
        return self._data_dir / "local" / account_id

    def folder(self, account_id: str, remote_name: str) -> MaildirFolder:
        if "/" in remote_name or remote_name in ("", ".", ".."):
            raise SyncError("A local folder name must be a single path segment.")
        return MaildirFolder(self.account_root(account_id) / remote_name)

    def open(self, account: AccountConfig) -> LocalSession:
        for mapping in account.folders:
            self.folder(account.account_id, mapping.remote_name).create()
        return LocalSession(self, account.account_id)

    def change_watch(self, account: AccountConfig) -> MaildirWatch:
        """A watch over every folder the account maps (see `MaildirWatch`)."""
        return MaildirWatch(
            [self.folder(account.account_id, m.remote_name).path for m in account.folders]
        )


class LocalSession:
    supports_condstore = False
    supports_qresync = False
    supports_idle = False

    def __init__(self, connector: LocalConnector, account_id: str) -> None:
        self._connector = connector
        self._account_id = account_id
        self._files: dict[int, Path] = {}

    def list_folders(self) -> list[str]:
        root = self._connector.account_root(self._account_id)
        if not root.exists():
            return []
        return sorted(p.name for p in root.iterdir() if (p / "cur").is_dir())

    def select(self, remote_name: str) -> FolderStatus:
        folder = self._connector.folder(self._account_id, remote_name)
        uidvalidity, files = folder.scan()
        self._files = files
        return FolderStatus(
            uidvalidity=uidvalidity,
            uid_next=(max(files) + 1) if files else None,
            exists=len(files),
            highest_modseq=None,
        )

    def _current(self, uid: int) -> Path | None:
        """The file for `uid`, following a rename that changed its flags since the scan."""
        path = self._files.get(uid)
        if path is None:
            return None
        if path.exists():
            return path
        base = _base(path.name)
        for sub in ("cur", "new"):
            for entry in os.scandir(path.parent.parent / sub):
                if _base(entry.name) == base:
                    self._files[uid] = Path(entry.path)
                    return self._files[uid]
        return None

    def search_uids(self) -> list[int]:
        return sorted(self._files)

    def _located(self, uid: int) -> tuple[Path, os.stat_result] | None:
        path = self._current(uid)
        if path is None:
            return None
        try:
            return path, path.stat()
        except FileNotFoundError:
            return None

    def fetch_envelopes(self, uids: Sequence[int]) -> list[EnvelopeItem]:
        result = []
        for uid in sorted(uids):
            found = self._located(uid)
            if found is not None:
                result.append(EnvelopeItem(uid=uid, size_octets=found[1].st_size))
        return result

    def _read(self, uids: Sequence[int], headers_only: bool) -> Iterator[FetchedMessage]:
        for uid in sorted(uids):
            found = self._located(uid)
            if found is None:
                continue
            path, stat = found
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                continue
            if headers_only:
                end = raw.find(b"\n\n")
                raw = raw[: end + 2] if end >= 0 else raw
            yield FetchedMessage(
                uid=uid,
                size_octets=stat.st_size,
                flags=_flags_of(path.name),
                modseq=None,
                received_at=datetime.fromtimestamp(stat.st_mtime, UTC),
                raw=raw,
                headers_only=headers_only,
            )

    def fetch_bodies(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        return self._read(uids, headers_only=False)

    def fetch_headers(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        return self._read(uids, headers_only=True)

    def fetch_identity(self, uids: Sequence[int]) -> dict[int, tuple[str | None, int]]:
        result: dict[int, tuple[str | None, int]] = {}
        for message in self._read(uids, headers_only=True):
            value = None
            for line in message.raw.decode("utf-8", "replace").splitlines():
                if line.lower().startswith("message-id:"):
                    value = line.split(":", 1)[1]
                    break
            ids = parse_msg_ids(value)
            result[message.uid] = (ids[0] if ids else None, message.size_octets)
        return result

    def changes_since(self, modseq: int) -> ChangeSet:
        raise SyncError("Local folders keep no mod-sequences.")

    def all_flags(self) -> list[FlagChange]:
        result = []
        for uid in sorted(self._files):
            found = self._located(uid)
            if found is not None:
                result.append(FlagChange(uid=uid, flags=_flags_of(found[0].name), modseq=None))
        return result

    def wait_for_change(self, timeout_seconds: float) -> bool:
        return False

    def maildir(self, remote_name: str) -> MaildirFolder:
        return self._connector.folder(self._account_id, remote_name)

    def reflag(self, remote_name: str, uids: Sequence[int], letter: str, present: bool) -> set[int]:
        """Set or clear one flag letter on these messages of a folder; answers the UIDs found."""
        self.select(remote_name)
        folder = self._connector.folder(self._account_id, remote_name)
        done: set[int] = set()
        for uid in uids:
            path = self._current(uid)
            moved = folder.reflag(path, letter, present) if path is not None else None
            if moved is not None:
                self._files[uid] = moved
                done.add(uid)
        return done

    def close(self) -> None:
        self._files = {}
