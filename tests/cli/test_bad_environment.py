"""A command started in an environment it cannot work in (a data directory it cannot create,
a database it cannot reach, a configuration it cannot read) says so on one line with a code
and exits non-zero, without a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mailfathom.domain.codes import StoreCode

from .operator_cli import local_config, one_error_line, run_to_exit


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A path nothing can be created under: a file stands where its parent should be."""
    (tmp_path / "a-file").write_text("in the way\n", "utf-8")
    return tmp_path / "a-file" / "below"


@pytest.mark.parametrize(
    "args",
    [
        ["serve"],
        ["serve", "--stdio"],
        ["sync"],
        ["sync", "--continuous"],
        ["deliver", "--once"],
        ["accounts"],
        ["mailbox", "verify"],
        ["outbox", "list"],
    ],
)
def test_a_data_directory_that_cannot_be_created_is_one_line(
    tmp_path: Path, blocked: Path, args: list[str]
) -> None:
    config = local_config(tmp_path, data_dir=blocked)
    result = run_to_exit(tmp_path, *args, "--config", str(config))
    one_error_line(result, StoreCode.DATA_DIR_NOT_WRITABLE)


def test_a_demo_directory_that_cannot_be_created_is_one_line(tmp_path: Path, blocked: Path) -> None:
    result = run_to_exit(tmp_path, "demo", "--no-serve", "--data-dir", str(blocked))
    one_error_line(result, StoreCode.DATA_DIR_NOT_WRITABLE)


@pytest.mark.parametrize("args", [["sync"], ["serve"], ["outbox", "list"]])
def test_a_database_that_cannot_be_reached_is_one_line(tmp_path: Path, args: list[str]) -> None:
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    store = 'DatabaseUrl = "postgresql+psycopg://mailfathom@127.0.0.1:1/mailfathom"'
    config = local_config(tmp_path, store=store)
    result = run_to_exit(tmp_path, *args, "--config", str(config))
    one_error_line(result, StoreCode.DATABASE_NOT_OPENED)


def test_a_demo_configuration_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """The demo writes its configuration on every run: a directory in its place stops it."""
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "mailfathom.toml").mkdir()
    result = run_to_exit(tmp_path, "demo", "--no-serve", "--data-dir", str(demo))
    one_error_line(result, StoreCode.DATA_DIR_NOT_WRITABLE)


@pytest.mark.parametrize("args", [["sync"], ["serve"]])
def test_a_configuration_that_cannot_be_read_is_one_line(tmp_path: Path, args: list[str]) -> None:
    """A directory where the file should be: reading it fails as an unreadable file does."""
    (tmp_path / "mailfathom.toml").mkdir()
    result = run_to_exit(tmp_path, *args, "--config", str(tmp_path / "mailfathom.toml"))
    one_error_line(result, 11001)
