"""A real Dovecot IMAP server for tests, running in a private temporary directory.

The server listens on 127.0.0.1 only, on a port chosen at start, with plaintext
authentication allowed (there is no TLS on loopback). Each user has a
``passwd-file`` of its own, written by :meth:`DovecotServer.add_user` while the
server runs. Mail is stored as Maildir under the temporary directory and is
owned by an unprivileged uid. The hierarchy separator is ``/``; Archive, Drafts,
Junk, Sent and Trash carry their SPECIAL-USE attributes (RFC 6154) once created.
"""

from __future__ import annotations

import atexit
import contextlib
import grp
import os
import pwd
import re
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

from ._common import (
    LOOPBACK,
    ServerError,
    ServerStartError,
    free_port,
    pid_alive,
    run,
    scratch_dir,
    tail,
    terminate,
)
from .oauth import OAuthServer

# Mail is owned by this uid/gid when the server runs as root. Dovecot refuses to
# run mail processes as root or below ``first_valid_uid``; a numeric id without a
# /etc/passwd entry works, so no system account is needed.
MAIL_UID = 5000
MAIL_GID = 5000

STARTUP_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0
COMMAND_TIMEOUT = 30.0
_PORT_ATTEMPTS = 3

_USERNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")


@dataclass(frozen=True)
class ImapAccount:
    """Where and how to log in to one IMAP account."""

    host: str
    port: int
    username: str
    password: str


def _unlink_files(paths: Iterable[Path]) -> None:
    for path in paths:
        if path.is_file():
            path.unlink(missing_ok=True)


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"):
        candidate = Path(directory, name)
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise ServerStartError(
        f"{name!r} not found: install Debian's dovecot-imapd package (scripts/test does this)"
    )


class DovecotServer:
    """Start, use and stop a private Dovecot instance.

    Use as a context manager or call :meth:`start` and :meth:`stop`.
    """

    host = LOOPBACK

    def __init__(
        self,
        *,
        startup_timeout: float = STARTUP_TIMEOUT,
        imap_capability: str | None = None,
        oauth: OAuthServer | None = None,
        special_use: Mapping[str, str] | None = None,
        process_limit: int | None = None,
    ) -> None:
        """`imap_capability`, when given, is the whole CAPABILITY list the server announces
        after login (Dovecot's `imap_capability` setting), for a server without an
        extension such as MOVE. `special_use` gives more folders their SPECIAL-USE attribute
        (folder name -> attribute, e.g. `"[Gmail]/All Mail": "\\All"`), announced once the
        folder is created, beside those of Archive, Drafts, Junk, Sent and Trash.

        With `oauth`, the server also accepts SASL XOAUTH2 and OAUTHBEARER logins (Dovecot's
        `oauth2` passdb): the bearer token is introspected (RFC 7662) at that authorization
        server with its introspection client, and the login succeeds when the answer is
        `active` and its `username` is the login name. Password logins keep working beside
        them: each passdb serves only its own mechanisms.

        `process_limit` raises Dovecot's default of 100 processes per service (one IMAP
        session is one process), for a server holding hundreds of sessions at once."""
        self.startup_timeout = startup_timeout
        self.imap_capability = imap_capability
        self.oauth = oauth
        self.special_use = dict(special_use or {})
        self.process_limit = process_limit
        self.dovecot_path = _binary("dovecot")
        self.doveconf_path = _binary("doveconf")
        self.doveadm_path = _binary("doveadm")
        self.port = 0
        self.instance_name = f"mailfathom-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._users: dict[str, str] = {}
        self._lock = threading.Lock()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            self.mail_uid, self.mail_gid = MAIL_UID, MAIL_GID
        else:
            self.mail_uid, self.mail_gid = os.geteuid(), os.getegid()

    # ----------------------------------------------------------------- paths

    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("the Dovecot server has not been started")
        return self._root

    @property
    def config_path(self) -> Path:
        return self.root / "dovecot.conf"

    @property
    def log_path(self) -> Path:
        return self.root / "dovecot.log"

    @property
    def users_dir(self) -> Path:
        """Holds one passwd-file per user, named after the user."""
        return self.root / "users"

    def home(self, username: str) -> Path:
        """The home directory of ``username``."""
        return self.root / "home" / username

    def maildir(self, username: str) -> Path:
        """The root of ``username``'s mail: ``INBOX/`` and one directory per folder,
        nested like the folder hierarchy (Maildir with ``LAYOUT=fs``)."""
        return self.home(username) / "Maildir"

    # ------------------------------------------------------------- lifecycle

    def start(self) -> DovecotServer:
        if self._proc is not None:
            raise RuntimeError("the Dovecot server is already running")
        self._root = scratch_dir("mailfathom-dovecot-")
        try:
            self._prepare_tree()
            last_error: ServerStartError | None = None
            for _ in range(_PORT_ATTEMPTS):
                self.port = free_port()
                self._write_config()
                run(
                    [self.doveconf_path, "-c", str(self.config_path), "-n"],
                    timeout=COMMAND_TIMEOUT,
                    what="doveconf (configuration check)",
                )
                try:
                    self._launch_and_wait()
                    break
                except ServerStartError as exc:
                    self._kill()
                    last_error = exc
                    if "Address already in use" not in str(exc):
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
        """Stop the server by the pid it was started with and remove its directory."""
        atexit.unregister(self.stop)
        self._kill()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def __enter__(self) -> DovecotServer:
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
        return self._proc is not None and self._proc.poll() is None

    # ---------------------------------------------------------------- users

    def add_user(self, name: str, password: str) -> ImapAccount:
        """Create an IMAP user; it can log in at once."""
        if not _USERNAME_RE.match(name):
            raise ValueError(f"unsupported IMAP user name for the test server: {name!r}")
        if not password or any(c in password for c in ":\r\n\0"):
            raise ValueError("test passwords must be non-empty without ':' or line breaks")
        with self._lock:
            if name in self._users:
                raise ValueError(f"user {name!r} already exists")
            self._write_passwd(name, password)
            self._users[name] = password
        return self.account(name)

    def account(self, username: str) -> ImapAccount:
        return ImapAccount(self.host, self.port, username, self._users[username])

    # ----------------------------------------------------------- admin tools

    def doveadm(
        self, *args: str, input_bytes: bytes | None = None, timeout: float = COMMAND_TIMEOUT
    ) -> str:
        """Run ``doveadm -c CONF ARGS...`` against this server and return its stdout.

        For example ``server.doveadm("flags", "add", "-u", user, "\\\\Seen", "mailbox",
        "INBOX", "uid", "1")`` or ``server.doveadm("expunge", "-u", user, "mailbox",
        "INBOX", "all")``.
        """
        proc = run(
            [self.doveadm_path, "-c", str(self.config_path), *args],
            timeout=timeout,
            what="doveadm",
            input_bytes=input_bytes,
        )
        return proc.stdout.decode("utf-8", errors="replace")

    def save_message(self, username: str, message: bytes, folder: str = "INBOX") -> None:
        """Deliver a raw RFC 5322 message into ``folder`` without going through IMAP."""
        self.doveadm("save", "-u", username, "-m", folder, input_bytes=message)

    def create_folder(self, username: str, folder: str) -> None:
        self.doveadm("mailbox", "create", "-u", username, folder)

    def mailbox_status(self, username: str, folder: str = "INBOX") -> dict[str, int]:
        """Return ``messages``, ``uidnext``, ``uidvalidity`` and ``highestmodseq``."""
        out = self.doveadm(
            "-f",
            "flow",
            "mailbox",
            "status",
            "-u",
            username,
            "messages uidnext uidvalidity highestmodseq",
            folder,
        )
        return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", out)}

    def uidvalidity(self, username: str, folder: str = "INBOX") -> int:
        return self.mailbox_status(username, folder)["uidvalidity"]

    def disconnect_user(self, username: str, timeout: float = COMMAND_TIMEOUT) -> None:
        """Close every IMAP session of ``username`` (``doveadm kick``) and wait for
        their processes to exit. Clients see ``* BYE Server shutting down.``"""
        pids = self._session_pids(username)
        if not pids:
            return
        self.doveadm("kick", username)
        deadline = time.monotonic() + timeout
        while any(pid_alive(pid) for pid in pids):
            if time.monotonic() > deadline:
                raise ServerError(f"sessions of {username} still running after {timeout:.0f} s")
            time.sleep(0.02)

    def _session_pids(self, username: str) -> set[int]:
        out = self.doveadm("who", "-1", username)
        pids: set[int] = set()
        for line in out.splitlines()[1:]:
            fields = line.split()
            if len(fields) >= 3 and fields[0] == username and fields[2].isdigit():
                pids.add(int(fields[2]))
        return pids

    def reset_uidvalidity(self, username: str, folder: str = "INBOX") -> int:
        """Make ``folder`` look as if the server had rebuilt it from scratch.

        The user's open IMAP sessions are closed first (Dovecot processes cache
        index state, and a session that outlived the reset would only report
        internal errors). Then the folder's ``dovecot-uidlist`` and index files
        are deleted, with the account's mailbox-list index that caches per-folder
        STATUS values; the message files stay. Dovecot assigns a new UIDVALIDITY
        and renumbers the remaining messages from UID 1 when the folder is next
        opened, which this method does through doveadm so that the change has
        happened when it returns. Returns the new UIDVALIDITY.
        """
        before = self.uidvalidity(username, folder)
        mail_root = self.maildir(username)
        directories = {
            Path(self._mailbox_path(username, folder, kind)) for kind in ("control", "index")
        }
        self.disconnect_user(username)
        for directory in directories:
            for pattern in ("dovecot-uidlist", "dovecot-uidlist.lock", "dovecot.index*"):
                _unlink_files(directory.glob(pattern))
        _unlink_files(mail_root.glob("dovecot.list.index*"))
        after = self.uidvalidity(username, folder)
        if after == before:
            raise ServerError(f"UIDVALIDITY of {username}/{folder} did not change ({after})")
        return after

    def _mailbox_path(self, username: str, folder: str, kind: str) -> str:
        out = self.doveadm("mailbox", "path", "-u", username, "-t", kind, folder).strip()
        if not out:
            raise ServerError(f"doveadm gave no {kind} path for {username}/{folder}")
        return out

    # ------------------------------------------------------------- internals

    def _prepare_tree(self) -> None:
        root = self.root
        # Dovecot's unprivileged processes (auth, login, mail) must reach the
        # passwd-file and the homes below this directory.
        root.chmod(0o755)
        for name in ("run", "state", "users"):
            (root / name).mkdir(mode=0o755)
        home = root / "home"
        home.mkdir(mode=0o755)
        if self._as_root:
            os.chown(home, self.mail_uid, self.mail_gid)

    def _write_passwd(self, username: str, password: str) -> None:
        # One passwd-file per user: Dovecot loads a user's file on the first
        # lookup of that user, so a new account works at once. (A single shared
        # file is re-checked for changes at most once per second, so a login
        # right after adding a user could still be refused.)
        path = self.users_dir / username
        tmp = path.with_name(f".{username}.tmp")
        tmp.write_text(f"{username}:{{PLAIN}}{password}::::::\n", encoding="utf-8")
        tmp.chmod(0o644)
        tmp.replace(path)

    def _write_config(self) -> None:
        root = self.root
        lines = [
            "protocols = imap",
            f"listen = {LOOPBACK}",
            f"base_dir = {root / 'run'}",
            f"state_dir = {root / 'state'}",
            f"instance_name = {self.instance_name}",
            f"log_path = {self.log_path}",
            f"info_log_path = {self.log_path}",
            "auth_verbose = yes",
            # Failed logins are answered at once instead of after two seconds.
            "auth_failure_delay = 0 secs",
            "ssl = no",
            "disable_plaintext_auth = no",
            f"auth_mechanisms = plain login{' xoauth2 oauthbearer' if self.oauth else ''}",
            "login_trusted_networks = 127.0.0.0/8",
            f"first_valid_uid = {self.mail_uid}",
            f"last_valid_uid = {self.mail_uid}",
            f"first_valid_gid = {self.mail_gid}",
            # One directory per folder, nested like the hierarchy, with INBOX in a
            # directory of its own: folder names may contain '.', and INBOX may
            # have children, as on most public IMAP services.
            "mail_location = maildir:~/Maildir:LAYOUT=fs:INBOX=~/Maildir/INBOX",
            # Changes made by other processes reach IDLE clients promptly even
            # where inotify is unavailable.
            "mailbox_idle_check_interval = 1 secs",
            *(
                [
                    f"default_process_limit = {self.process_limit}",
                    f"default_client_limit = {4 * self.process_limit}",
                ]
                if self.process_limit
                else []
            ),
            "",
            "namespace inbox {",
            "  inbox = yes",
            "  separator = /",
            "  mailbox Archive {",
            "    special_use = \\Archive",
            "  }",
            "  mailbox Drafts {",
            "    special_use = \\Drafts",
            "  }",
            "  mailbox Junk {",
            "    special_use = \\Junk",
            "  }",
            "  mailbox Trash {",
            "    special_use = \\Trash",
            "  }",
            "  mailbox Sent {",
            "    special_use = \\Sent",
            "  }",
            *(
                line
                for name, attribute in self.special_use.items()
                for line in (f'  mailbox "{name}" {{', f"    special_use = {attribute}", "  }")
            ),
            "}",
            "",
            "passdb {",
            "  driver = passwd-file",
            f"  args = scheme=PLAIN {self.users_dir}/%u",
            # `none`: the lookups of doveadm and of the static userdb, made without a login.
            *(["  mechanisms = plain login none"] if self.oauth else []),
            "}",
            *self._oauth_passdb(),
            "userdb {",
            "  driver = static",
            f"  args = uid={self.mail_uid} gid={self.mail_gid} home={root / 'home'}/%u",
            "}",
            "",
            "protocol imap {",
            "  mail_max_userip_connections = 100",
            *([f"  imap_capability = {self.imap_capability}"] if self.imap_capability else []),
            "}",
            "",
            "service imap-login {",
            "  inet_listener imap {",
            f"    address = {LOOPBACK}",
            f"    port = {self.port}",
            "  }",
            "  inet_listener imaps {",
            "    port = 0",
            "  }",
        ]
        if not self._as_root:
            lines += ["  chroot ="]
        lines += [
            "}",
            "",
            # No growing delay for logins from an address after failed logins:
            # tests log in with wrong passwords on purpose.
            "service anvil {",
            "  unix_listener anvil-auth-penalty {",
            "    mode = 0",
            "  }",
        ]
        if not self._as_root:
            lines += ["  chroot ="]
        lines += ["}"]
        if not self._as_root:
            user = pwd.getpwuid(os.geteuid()).pw_name
            group = grp.getgrgid(os.getegid()).gr_name
            lines += [
                f"default_internal_user = {user}",
                f"default_internal_group = {group}",
                f"default_login_user = {user}",
            ]
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _oauth_passdb(self) -> list[str]:
        """The `oauth2` passdb and its settings file (Dovecot 2.3's names), or nothing."""
        if self.oauth is None:
            return []
        client_id, secret = self.oauth.introspection_client
        endpoint = urlsplit(self.oauth.introspection_endpoint)
        url = f"{endpoint.scheme}://{client_id}:{secret}@{endpoint.netloc}{endpoint.path}"
        settings = self.root / "oauth2.conf.ext"
        settings.write_text(
            "\n".join(
                [
                    "introspection_mode = post",
                    f"introspection_url = {url}",
                    "force_introspection = yes",
                    "username_attribute = username",
                    "active_attribute = active",
                    "active_value = true",
                    "timeout_msecs = 20000",
                ]
            )
            + "\n",
            encoding="utf-8",
        )
        # Read by Dovecot's unprivileged auth process.
        settings.chmod(0o644)
        return [
            "passdb {",
            "  driver = oauth2",
            "  mechanisms = xoauth2 oauthbearer",
            f"  args = {settings}",
            "}",
        ]

    def _launch_and_wait(self) -> None:
        stdout_path = self.root / "dovecot.stdout"
        with stdout_path.open("ab") as out:
            self._proc = subprocess.Popen(
                [self.dovecot_path, "-F", "-c", str(self.config_path)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + self.startup_timeout
        last_error = "no attempt made"
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise self._start_error(f"dovecot exited with code {self._proc.returncode}")
            try:
                with socket.create_connection((self.host, self.port), timeout=1.0) as sock:
                    sock.settimeout(max(0.1, min(2.0, deadline - time.monotonic())))
                    greeting = sock.recv(4096)
                if greeting.startswith(b"* OK"):
                    return
                last_error = f"unexpected greeting {greeting[:200]!r}"
            except OSError as exc:
                last_error = str(exc)
            time.sleep(0.05)
        raise self._start_error(
            f"no IMAP greeting on {self.host}:{self.port} within "
            f"{self.startup_timeout:.0f} s ({last_error})"
        )

    def _start_error(self, message: str) -> ServerStartError:
        stdout = self.root / "dovecot.stdout"
        return ServerStartError(
            f"{message}\n--- {self.log_path} (tail) ---\n{tail(self.log_path)}"
            f"\n--- {stdout} (tail) ---\n{tail(stdout)}"
        )

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(Exception):
                terminate(proc, grace=STOP_TIMEOUT)
