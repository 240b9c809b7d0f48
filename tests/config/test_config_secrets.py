"""Reading secrets at connection time."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mailfathom.adapters.config import read_secret
from mailfathom.adapters.config.secrets import MAX_SECRET_FILE_OCTETS
from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import ConfigurationError, SecretUnavailable

SECRET = "pa55-w0rd with spaces "
ORIGIN = "Accounts[0].Imap.Secret"


def test_secret_is_read_from_the_given_environment() -> None:
    ref = SecretRef(env="WORK_IMAP_PASSWORD", origin=ORIGIN)
    assert read_secret(ref, {"WORK_IMAP_PASSWORD": SECRET}) == SECRET


def test_secret_is_read_from_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MF_TEST_SECRET_VARIABLE", SECRET)
    assert read_secret(SecretRef(env="MF_TEST_SECRET_VARIABLE")) == SECRET


@pytest.mark.parametrize("environ", [{}, {"WORK_IMAP_PASSWORD": ""}])
def test_unset_or_empty_variable_fails_naming_the_key_and_the_variable(
    environ: dict[str, str],
) -> None:
    ref = SecretRef(env="WORK_IMAP_PASSWORD", origin=ORIGIN)
    with pytest.raises(SecretUnavailable) as caught:
        read_secret(ref, environ)
    assert caught.value.code == 11002
    assert caught.value.origin == f"{ORIGIN}.Env"
    assert caught.value.message.startswith(f"{ORIGIN}.Env: ")
    assert "WORK_IMAP_PASSWORD" in str(caught.value)


def test_failure_never_repeats_other_environment_values() -> None:
    ref = SecretRef(env="WORK_IMAP_PASSWORD", origin=ORIGIN)
    with pytest.raises(ConfigurationError) as caught:
        read_secret(ref, {"OTHER": SECRET, "WORK_IMAP_PASSWORD": ""})
    assert SECRET not in str(caught.value)


def test_secret_is_read_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET, encoding="utf-8")
    assert read_secret(SecretRef(file=path, origin=ORIGIN), {}) == SECRET


@pytest.mark.parametrize(("ending", "kept"), [("\n", ""), ("\r\n", ""), ("\n\n", "\n")])
def test_one_trailing_line_break_is_removed_from_a_secret_file(
    tmp_path: Path, ending: str, kept: str
) -> None:
    path = tmp_path / "secret"
    path.write_bytes((SECRET + ending).encode())
    assert read_secret(SecretRef(file=path), {}) == SECRET + kept


def test_missing_secret_file_fails_naming_the_key_not_the_path(tmp_path: Path) -> None:
    path = tmp_path / "absent-secret-file"
    with pytest.raises(SecretUnavailable) as caught:
        read_secret(SecretRef(file=path, origin=ORIGIN), {})
    assert caught.value.code == 11002
    assert caught.value.message.startswith(f"{ORIGIN}.File: ")
    assert "cannot be read" in caught.value.message
    assert "absent-secret-file" not in str(caught.value)


def test_a_directory_is_not_a_secret_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot be read"):
        read_secret(SecretRef(file=tmp_path, origin=ORIGIN), {})


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_secret_file_fails_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(SECRET, encoding="utf-8")
    path.chmod(0)
    with pytest.raises(ConfigurationError, match="cannot be read"):
        read_secret(SecretRef(file=path, origin=ORIGIN), {})


@pytest.mark.parametrize("content", [b"", b"\n"])
def test_empty_secret_file_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "secret"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError, match=r"\.File: the file it names is empty"):
        read_secret(SecretRef(file=path, origin=ORIGIN), {})


def test_secret_file_that_is_not_utf8_fails_without_quoting_it(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_bytes(b"abc\xff\xfedef")
    with pytest.raises(ConfigurationError) as caught:
        read_secret(SecretRef(file=path, origin=ORIGIN), {})
    assert "not valid UTF-8" in caught.value.message
    assert "xff" not in str(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__


def test_oversized_secret_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_bytes(b"x" * (MAX_SECRET_FILE_OCTETS + 1))
    with pytest.raises(ConfigurationError, match="larger than"):
        read_secret(SecretRef(file=path, origin=ORIGIN), {})


@pytest.mark.parametrize("ref", [SecretRef(), SecretRef(env="A", file=Path("/b"))])
def test_reference_naming_neither_or_both_sources_is_refused(ref: SecretRef) -> None:
    with pytest.raises(ConfigurationError, match="exactly one of Env or File"):
        read_secret(ref, {"A": SECRET})


def test_origin_does_not_affect_equality() -> None:
    assert SecretRef(env="A", origin="x") == SecretRef(env="A", origin="y")
