"""Ctrl-C while `mailfathom init` or `mfctl account consent` waits for the person (the
device code's approval, the browser's return, a prompt) or checks the servers with a new
grant: one short line, exit status 130, no traceback, and nothing left behind by init (a
refresh token it already wrote removed again, with the directories it made for it)."""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.pseudo_terminal import Terminal, terminal_environment
from servers.dovecot import ImapAccount
from servers.oauth import DEVICE_GRANT, OAuthServer
from waiting import wait_for

from .init_runs import CommandRun, Finished, generic_flags, init_by_device, init_run
from .metadata_host import metadata, metadata_host

INIT_INTERRUPTED = "Interrupted; nothing was written."
CONSENT_INTERRUPTED = "Interrupted; the account's refresh token is as it was."
WITHDRAWN = "The access just granted was withdrawn at the provider."
CHECKING = re.compile(r"^(Checking the IMAP server)")


def _interrupted(done: Finished, line: str) -> None:
    assert done.returncode == 130, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [line], done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def _nothing_written(root: Path) -> None:
    assert sorted(p.name for p in root.iterdir()) == []


def _init(server: OAuthServer, client_id: str, account: ImapAccount, root: Path) -> CommandRun:
    root.mkdir()
    flags = generic_flags(server, client_id, account, root / "mailfathom.toml")
    return init_run(root, [*flags, *(["--flow", "loopback"] if "loopback" in root.name else [])])


def test_while_the_device_code_waits_for_approval(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    root = tmp_path / "device"
    run = _init(oauth_server, client_id, oauth_imap_account, root)
    run.user_code()
    run.interrupt()
    _interrupted(run.finish(), INIT_INTERRUPTED)
    _nothing_written(root)


def test_while_the_loopback_listener_waits_for_the_browser(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    root = tmp_path / "loopback"
    run = _init(oauth_server, client_id, oauth_imap_account, root)
    run.authorization_url(oauth_server.authorization_endpoint)
    run.interrupt()
    _interrupted(run.finish(), INIT_INTERRUPTED)
    _nothing_written(root)


@pytest.fixture
def silent_imap() -> Iterator[tuple[str, int]]:
    """A port that takes connections and never says anything: the IMAP check waits."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        yield listener.getsockname()
    finally:
        listener.close()


def test_after_the_grant_while_the_servers_are_checked(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    client_id: str,
    tmp_path: Path,
    silent_imap: tuple[str, int],
) -> None:
    host, port = silent_imap
    waiting = ImapAccount(host, port, oauth_imap_account.username, oauth_imap_account.password)
    root = tmp_path / "checking"
    run = _init(oauth_server, client_id, waiting, root)
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    run.printed(CHECKING, "the IMAP check began")
    assert (root / "secrets" / "mail.refresh").exists()
    revoked = _revocations(oauth_server)
    run.interrupt()
    done = run.finish()
    _interrupted(done, INIT_INTERRUPTED)
    _nothing_written(root)
    # The grant init threw away is not left working at the provider.
    assert _revocations(oauth_server) == revoked + 1
    assert WITHDRAWN in done.stdout


def _revocations(server: OAuthServer) -> int:
    return server.counts().get("revocation", 0)


def test_at_a_prompt(tmp_path: Path) -> None:
    root = tmp_path / "prompted"
    root.mkdir()
    argv = [sys.executable, "-m", "mailfathom", "init", "--config", str(root / "mf.toml")]
    terminal = Terminal(argv, root, terminal_environment(), controlling=True)
    try:
        terminal.read_until(lambda text: "IMAP server host" in text, "the first question")
        terminal.type(b"\x03")
        assert terminal.ended() == 130
    finally:
        shown = terminal.stop()
    assert shown.rstrip().endswith(INIT_INTERRUPTED), shown
    assert "Traceback" not in shown
    _nothing_written(root)


def test_consent_while_the_device_code_waits_for_approval(
    oauth_server: OAuthServer, oauth_imap_account: ImapAccount, client_id: str, tmp_path: Path
) -> None:
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    token_file = tmp_path / "secrets" / "mail.refresh"
    granted = token_file.read_text("utf-8")
    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    run.user_code()
    run.interrupt()
    _interrupted(run.finish(), CONSENT_INTERRUPTED)
    assert token_file.read_text("utf-8") == granted


@pytest.fixture
def silent_revocation() -> Iterator[tuple[str, list[socket.socket]]]:
    """A revocation endpoint that takes connections and never answers: its address, and the
    connections it took so far."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    taken: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                taken.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    host, port = listener.getsockname()
    try:
        yield f"http://{host}:{port}/revoke", taken
    finally:
        listener.close()
        for connection in taken:
            connection.close()


def test_while_a_grant_thrown_away_is_withdrawn(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    client_id: str,
    tmp_path: Path,
    silent_revocation: tuple[str, list[socket.socket]],
) -> None:
    # The mail server refuses the login, and Ctrl-C comes while the provider is slow to
    # withdraw the grant: the refresh token written is removed all the same.
    endpoint, taken = silent_revocation
    root = tmp_path / "withdrawing"
    root.mkdir()
    with metadata_host() as host:
        host.publish(
            "/.well-known/oauth-authorization-server",
            metadata(
                host.base,
                token_endpoint=oauth_server.token_endpoint,
                device_authorization_endpoint=oauth_server.device_authorization_endpoint,
                revocation_endpoint=endpoint,
                grant_types_supported=["refresh_token", DEVICE_GRANT],
            ),
        )
        flags = generic_flags(oauth_server, client_id, oauth_imap_account, root / "mf.toml")
        flags[flags.index(oauth_server.issuer)] = host.base
        run = init_run(root, flags)
        oauth_server.approve_device(run.user_code(), f"stranger-{oauth_imap_account.username}")
        wait_for(lambda: taken, "the revocation request was sent")
        run.interrupt()
        done = run.finish()
    # The refreshes of the login check are logged before the line.
    assert done.returncode == 130, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == INIT_INTERRUPTED, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    _nothing_written(root)


def test_consent_while_the_new_grant_is_tried(
    oauth_server: OAuthServer,
    oauth_imap_account: ImapAccount,
    client_id: str,
    tmp_path: Path,
    silent_imap: tuple[str, int],
) -> None:
    # Ctrl-C says nothing of who signed in: the new grant may share the authorization of the
    # token the account runs on, so it is deleted and left at the provider.
    config, _ = init_by_device(oauth_server, client_id, oauth_imap_account, tmp_path)
    token_file = tmp_path / "secrets" / "mail.refresh"
    granted = token_file.read_text("utf-8")
    _, port = silent_imap
    text = config.read_text("utf-8")
    config.write_text(text.replace(f"Port = {oauth_imap_account.port}", f"Port = {port}"))
    run = CommandRun(tmp_path, ["account", "consent", "--config", str(config), "--account", "mail"])
    oauth_server.approve_device(run.user_code(), oauth_imap_account.username)
    run.printed(re.compile(r"^(Checking the login)"), "the trial began")
    revoked = _revocations(oauth_server)
    run.interrupt()
    done = run.finish()
    assert done.returncode == 130, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == CONSENT_INTERRUPTED, done.stderr
    assert _revocations(oauth_server) == revoked
    assert "was not withdrawn at the provider (11046)" in done.stdout
    assert token_file.read_text("utf-8") == granted
    assert sorted(p.name for p in token_file.parent.iterdir()) == [token_file.name]
