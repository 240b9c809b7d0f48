"""Replacing a refresh token's file (a rotation, `mfctl account consent`) leaves the file as
the operator set it up: its owner, group and permissions, a symbolic link still a link, the
rename itself on disk; and a file belonging to another user is not taken over."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import structlog

import log_audit
from mailfathom.adapters.oauth.grant_files import (
    check_secret_place,
    create_secret_file,
    write_over_secret_file,
)
from mailfathom.adapters.oauth.tokens import AccessTokens, replace_secret_file
from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import ConfigurationError, ConsentRequired
from mailfathom.domain.oauth import OAuthCredential, OAuthProvider
from oauth.fake_token_server import error_answer, fake_token_server

OLD = "refresh-old-value-for-files"
NEW = "refresh-new-value-for-files"
log_audit.register(OLD, NEW)
SERVICE_UID, SERVICE_GID = 4321, 4322
NOBODY = 65534

Writer = Callable[[Path, str], None]
WRITERS = pytest.mark.parametrize(
    "write", [replace_secret_file, write_over_secret_file], ids=["rotation", "consent"]
)


def _token_file(directory: Path, mode: int = 0o600) -> Path:
    path = directory / "work.refresh"
    path.write_text(OLD + "\n")
    path.chmod(mode)
    return path


@WRITERS
def test_a_replaced_file_keeps_its_owner_group_and_permissions(
    tmp_path: Path, write: Writer
) -> None:
    path = _token_file(tmp_path, 0o640)
    os.chown(path, SERVICE_UID, SERVICE_GID)
    write(path, NEW)
    held = path.stat()
    assert path.read_text() == NEW + "\n"
    assert (held.st_uid, held.st_gid) == (SERVICE_UID, SERVICE_GID)
    assert stat.S_IMODE(held.st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work.refresh"]


@WRITERS
def test_what_others_could_read_is_not_kept(tmp_path: Path, write: Writer) -> None:
    path = _token_file(tmp_path, 0o664)
    write(path, NEW)
    assert stat.S_IMODE(path.stat().st_mode) == 0o660


@WRITERS
def test_a_linked_file_is_replaced_where_the_link_points(tmp_path: Path, write: Writer) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "config").mkdir()
    target = _token_file(tmp_path / "secrets")
    link = tmp_path / "config" / "work.refresh"
    link.symlink_to(target)
    write(link, NEW)
    assert link.is_symlink()
    assert link.resolve() == target
    assert target.read_text() == NEW + "\n"
    assert [p.name for p in (tmp_path / "secrets").iterdir()] == ["work.refresh"]
    assert [p.name for p in (tmp_path / "config").iterdir()] == ["work.refresh"]


@WRITERS
def test_the_rename_is_synced_to_the_directory(
    tmp_path: Path, write: Writer, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _token_file(tmp_path)
    synced: list[bool] = []
    real_fsync = os.fsync

    def fsync(handle: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(handle).st_mode))
        real_fsync(handle)

    monkeypatch.setattr(os, "fsync", fsync)
    write(path, NEW)
    assert synced == [False, True]


@pytest.fixture
def shared_directory() -> Iterator[Path]:
    """A directory every user may write in, as a misconfigured host might have."""
    directory = Path(tempfile.mkdtemp(prefix="mailfathom-shared-"))
    directory.chmod(0o777)
    try:
        yield directory
    finally:
        for entry in directory.iterdir():
            entry.unlink()
        directory.rmdir()


@contextmanager
def _as_nobody() -> Iterator[None]:
    """This process acting as another user of the machine for the block (tests run as
    root); the real user stays root, so the block can return."""
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.mark.parametrize(
    "call",
    [
        lambda path: write_over_secret_file(path, NEW),
        lambda path: check_secret_place(path, new=False),
    ],
    ids=["write", "check"],
)
def test_another_users_file_is_not_taken_over(
    shared_directory: Path, call: Callable[[Path], None]
) -> None:
    path = _token_file(shared_directory)
    os.chown(path, SERVICE_UID, SERVICE_GID)
    with _as_nobody(), pytest.raises(ConfigurationError) as refused:
        call(path)
    assert refused.value.code == 11021
    assert path.read_text() == OLD + "\n"
    assert path.stat().st_uid == SERVICE_UID


def test_directories_made_on_the_way_are_the_owners_only(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        create_secret_file(tmp_path / "a" / "b" / "c" / "work.refresh", NEW)
    finally:
        os.umask(previous)
    for made in ("a", "a/b", "a/b/c"):
        assert stat.S_IMODE((tmp_path / made).stat().st_mode) == 0o700, made


def test_a_secret_unreadable_while_waiting_for_consent_is_said_once(tmp_path: Path) -> None:
    path = _token_file(tmp_path)
    with fake_token_server() as server:
        server.responder = lambda form: error_answer("invalid_grant")
        tokens = AccessTokens()
        login = OAuthCredential(
            provider=OAuthProvider.GENERIC,
            client_id="mf",
            refresh_token=SecretRef(file=path, origin="Accounts[0].OAuth.RefreshToken"),
            token_endpoint=server.url,
            scopes=("mail",),
        )
        with pytest.raises(ConsentRequired):
            tokens.current("work", login)
        tokens.close()
    path.unlink()
    with structlog.testing.capture_logs() as events:
        assert tokens.consent_pending("work", login)
        assert tokens.consent_pending("work", login)
    said = [e for e in events if e["event"] == "oauth.secret_unreadable"]
    assert said == [
        {
            "event": "oauth.secret_unreadable",
            "log_level": "warning",
            "account": "work",
            "key": "Accounts[0].OAuth.RefreshToken.File",
            "error": "SecretUnavailable",
        }
    ]
    path.write_text(NEW)
    assert not tokens.consent_pending("work", login)
