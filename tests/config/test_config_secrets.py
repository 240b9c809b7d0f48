"""Reading secrets at connection time."""

from __future__ import annotations

from pathlib import Path

import pytest

from mailfathom.adapters.config import read_secret
from mailfathom.adapters.config.secrets import MAX_SECRET_FILE_OCTETS
from mailfathom.domain.config import SecretRef
from mailfathom.domain.errors import ConfigurationError, SecretUnavailable
from unprivileged import run_unprivileged, shared_directory

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


def _read_as_an_unprivileged_user(mode: int) -> str:
    """Root reads any file: the secret is read by an unprivileged user instead, from a file
    with `mode` in a directory that user may enter."""
    with shared_directory() as directory:
        path = directory / "secret"
        path.write_text(SECRET, encoding="utf-8")
        path.chmod(mode)
        return run_unprivileged(lambda: read_secret(SecretRef(file=path, origin=ORIGIN), {}))


def test_a_secret_file_is_read_by_an_unprivileged_user_when_its_mode_allows() -> None:
    assert _read_as_an_unprivileged_user(0o644) == SECRET


def test_a_secret_file_the_user_may_not_read_fails_cleanly() -> None:
    answer = _read_as_an_unprivileged_user(0o000)
    assert answer.startswith("SecretUnavailable: ")
    assert f"{ORIGIN}.File: the file it names cannot be read" in answer
    assert SECRET.strip() not in answer
    assert "mailfathom-unprivileged" not in answer


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
