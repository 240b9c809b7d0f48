"""A real PostgreSQL server for tests, in a private temporary data directory.

``initdb`` and ``postgres`` refuse to run as root, so when the tests run as
root the server runs as the ``postgres`` system account (created by Debian's
``postgresql`` package) through ``runuser``; otherwise it runs as the current
user. The server listens on 127.0.0.1 only, on a port chosen at start, trusts
every local connection, and runs with ``fsync=off`` since its data is thrown
away at the end.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from types import TracebackType

import psycopg
from psycopg import sql

from ._common import (
    LOOPBACK,
    CommandError,
    ServerError,
    ServerStartError,
    free_port,
    pid_alive,
    run,
    scratch_dir,
    tail,
)

SUPERUSER = "mailfathom"
SYSTEM_USER = "postgres"
STARTUP_TIMEOUT = 30.0
STOP_TIMEOUT = 20.0
COMMAND_TIMEOUT = 60.0
_PORT_ATTEMPTS = 3
_DBNAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def find_bindir() -> Path:
    """Locate the directory holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    override = os.environ.get("MAILFATHOM_PG_BINDIR")
    candidates: list[Path] = [Path(override)] if override else []
    # Debian keeps the server binaries out of PATH, one directory per major version.
    candidates += sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda p: _major_version(p.parent.name),
        reverse=True,
    )
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run(
                [pg_config, "--bindir"],
                capture_output=True,
                text=True,
                timeout=10,
                check=True,
                stdin=subprocess.DEVNULL,
            )
            candidates.append(Path(out.stdout.strip()))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).parent)
    for candidate in candidates:
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    raise ServerStartError(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's "
        "postgresql package (scripts/test does this) or set MAILFATHOM_PG_BINDIR"
    )


def _major_version(name: str) -> int:
    return int(name) if name.isdigit() else 0


def sqlalchemy_to_conninfo(url: str) -> str:
    """Turn ``postgresql+psycopg://...`` into a URL that psycopg accepts."""
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


class PostgresServer:
    """Start, use and stop a private PostgreSQL cluster.

    Use as a context manager or call :meth:`start` and :meth:`stop`.
    """

    host = LOOPBACK
    user = SUPERUSER

    def __init__(self, *, startup_timeout: float = STARTUP_TIMEOUT) -> None:
        self.startup_timeout = startup_timeout
        self.bindir = find_bindir()
        self.port = 0
        self.pid: int | None = None
        self._root: Path | None = None
        self._as_root = os.geteuid() == 0
        self._owner: pwd.struct_passwd | None = None
        if self._as_root:
            try:
                self._owner = pwd.getpwnam(SYSTEM_USER)
            except KeyError as exc:
                raise ServerStartError(
                    f"running as root needs the {SYSTEM_USER!r} system account "
                    "(Debian's postgresql package creates it)"
                ) from exc

    # ----------------------------------------------------------------- paths

    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("the PostgreSQL server has not been started")
        return self._root

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    @property
    def log_path(self) -> Path:
        return self.root / "postgres.log"

    # ------------------------------------------------------------- lifecycle

    def start(self) -> PostgresServer:
        if self.pid is not None:
            raise RuntimeError("the PostgreSQL server is already running")
        self._root = scratch_dir("mailfathom-pg-")
        try:
            self.socket_dir.mkdir(mode=0o700)
            if self._owner is not None:
                for path in (self.root, self.socket_dir):
                    os.chown(path, self._owner.pw_uid, self._owner.pw_gid)
            self._pg(
                "initdb",
                "-D",
                str(self.data_dir),
                "-A",
                "trust",
                "-U",
                SUPERUSER,
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
                what="initdb",
            )
            last_error: ServerError | None = None
            for _ in range(_PORT_ATTEMPTS):
                self.port = free_port()
                try:
                    self._launch_and_wait()
                    break
                except ServerError as exc:
                    last_error = exc
                    self._kill()
                    if "already in use" not in str(exc):
                        raise
            else:
                assert last_error is not None
                raise last_error
        except BaseException:
            self.stop()
            raise
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m fast``, then its pid) and remove its files."""
        atexit.unregister(self.stop)
        self._kill()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def halt(self) -> None:
        """Stop the server and keep its data and port, as an outage would (`resume`)."""
        self._kill()

    def resume(self) -> None:
        """Start a halted server again, on the same port, with its data."""
        self._launch_and_wait()

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.pid is not None and pid_alive(self.pid)

    # ------------------------------------------------------------- databases

    def conninfo(self, dbname: str = "postgres") -> str:
        """A libpq/psycopg connection URL for ``dbname``."""
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{dbname}"

    def url(self, dbname: str) -> str:
        """A SQLAlchemy URL (psycopg 3 driver) for ``dbname``."""
        return f"postgresql+psycopg://{SUPERUSER}@{self.host}:{self.port}/{dbname}"

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create a database, empty or as a copy of ``template`` (a database nobody is
        connected to), and return its SQLAlchemy URL."""
        for given in (name, template):
            if given is not None and not _DBNAME_RE.match(given):
                raise ValueError(f"unsupported test database name: {given!r}")
        statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if template is not None:
            statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
        with self._admin() as conn:
            conn.execute(statement)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, closing any connections still open to it."""
        with self._admin() as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(self.conninfo("postgres"), autocommit=True, connect_timeout=10)

    # ------------------------------------------------------------- internals

    def _pg(self, tool: str, *args: str, what: str, timeout: float = COMMAND_TIMEOUT) -> str:
        command = [str(self.bindir / tool), *args]
        if self._owner is not None:
            command = ["runuser", "-u", self._owner.pw_name, "--", *command]
        # cwd: the server account may not be allowed into the caller's directory.
        proc = run(command, timeout=timeout, what=what, cwd=self.root)
        return proc.stdout.decode(errors="replace")

    def _launch_and_wait(self) -> None:
        options = (
            f"-p {self.port} -k {self.socket_dir} -c listen_addresses={self.host} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=200"
        )
        try:
            self._pg(
                "pg_ctl",
                "start",
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_path),
                "-w",
                "-t",
                str(int(self.startup_timeout)),
                "-o",
                options,
                what="pg_ctl start",
                timeout=self.startup_timeout + 10,
            )
        except CommandError as exc:
            self.pid = self._read_pid()
            raise ServerStartError(
                f"{exc}\n--- {self.log_path} (tail) ---\n{tail(self.log_path)}"
            ) from exc
        self.pid = self._read_pid()
        self._wait_connectable()

    def _wait_connectable(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        last_error = "no attempt made"
        while time.monotonic() < deadline:
            try:
                with psycopg.connect(self.conninfo(), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError as exc:
                last_error = str(exc).strip()
            time.sleep(0.1)
        raise ServerStartError(
            f"PostgreSQL on {self.host}:{self.port} accepted no connection within "
            f"{self.startup_timeout:.0f} s ({last_error})\n"
            f"--- {self.log_path} (tail) ---\n{tail(self.log_path)}"
        )

    def _read_pid(self) -> int | None:
        try:
            first = (self.data_dir / "postmaster.pid").read_text().splitlines()[0]
        except (OSError, IndexError):
            return None
        return int(first) if first.strip().isdigit() else None

    def _kill(self) -> None:
        pid = self.pid if self.pid is not None else self._read_pid_if_any()
        self.pid = None
        if pid is None or not pid_alive(pid):
            return
        with contextlib.suppress(ServerError):
            self._pg(
                "pg_ctl",
                "stop",
                "-D",
                str(self.data_dir),
                "-m",
                "fast",
                "-w",
                "-t",
                str(int(STOP_TIMEOUT)),
                what="pg_ctl stop",
                timeout=STOP_TIMEOUT + 10,
            )
        deadline = time.monotonic() + 5.0
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def _read_pid_if_any(self) -> int | None:
        if self._root is None:
            return None
        return self._read_pid()
