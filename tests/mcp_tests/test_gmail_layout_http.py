"""A mailbox laid out as Gmail publishes it, from `mailfathom init` to the tools over HTTP.

The Dovecot account mirrors Gmail: `[Gmail]/…` folders with their SPECIAL-USE attributes, a
label folder (Work), and each message saved byte for byte in every folder it is labelled
with and in All Mail. `init --non-interactive` proposes the folders, `mailfathom sync` takes
a pass, `mailfathom serve` serves the file init wrote, and the official MCP client reads it:
each message once across folders and once per conversation, each folder's own copies when a
folder is named, and All Mail's mail once more when the file is edited to keep it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli.test_init import SECRET_ENV, imap_flags, run_init
from log_audit import register_all
from mcp_tests.client import call, every_email, structured
from mcp_tests.deployment import _free_port
from sending.served import serve
from servers.dovecot import DovecotServer, ImapAccount
from servers.gmail_layout import (
    ALL_MAIL,
    IMPORTANT,
    LABEL,
    OWNER,
    SENT_MAIL,
    STARRED,
    file_letters,
    gmail_dovecot,
    letter,
)
from snippet_text import PrintedSnippets

pytestmark = pytest.mark.dovecot

BUDGET = letter("Budget review", ["INBOX", LABEL], minutes=1)
OFFSITE = letter("Offsite venue", [LABEL], minutes=2)
RECEIPT = letter("Archived receipt", [], minutes=3)
NOTE = letter("Starred note", ["INBOX", STARRED, IMPORTANT], minutes=4)
PLAN = letter("Quarterly plan", ["INBOX", LABEL], minutes=10, body="The quarterly figures.\n")
ANSWER = letter(
    "Re: Quarterly plan",
    [SENT_MAIL],
    sender=f"Owner <{OWNER}>",
    to="rosa@example.net",
    minutes=20,
    answers=PLAN,
)
AGAIN = letter("Re: Re: Quarterly plan", ["INBOX"], minutes=30, answers=ANSWER)
LETTERS = (BUDGET, OFFSITE, RECEIPT, NOTE, PLAN, ANSWER, AGAIN)


@dataclass(frozen=True)
class Mailbox:
    root: Path
    config: Path
    key: str
    url: str


@pytest.fixture(scope="module")
def gmail() -> Iterator[DovecotServer]:
    yield from gmail_dovecot()


def _account(gmail: DovecotServer) -> ImapAccount:
    suffix = uuid.uuid4().hex[:10]
    account = gmail.add_user(f"gmail-http-{suffix}", f"pw-{suffix}")
    file_letters(gmail, account.username, LETTERS)
    register_all([account.password])
    return account


def _init(account: ImapAccount, root: Path) -> tuple[Path, str]:
    config = root / "mailfathom.toml"
    done = run_init(
        root, *imap_flags(account, config), "--mcp-port", str(_free_port()),
        env={SECRET_ENV: account.password},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _, headers = PrintedSnippets.parse(done.stdout).http_url_and_headers()
    return config, headers["Authorization"].removeprefix("Bearer ")


def _sync(account: ImapAccount, config: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mailfathom", "sync", "--config", str(config)],
        env=_environment(account),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _environment(account: ImapAccount) -> dict[str, str]:
    return {**os.environ, SECRET_ENV: account.password}


def _served(account: ImapAccount, root: Path, config: Path, key: str) -> Iterator[Mailbox]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SECRET_ENV, account.password)
        for served in serve(root, config.read_text("utf-8"), None, deliver=False):
            yield Mailbox(root, config, key, served.url)


@pytest.fixture(scope="module")
def mailbox(gmail: DovecotServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mailbox]:
    account = _account(gmail)
    root = tmp_path_factory.mktemp("gmail-http")
    config, key = _init(account, root)
    _sync(account, config)
    yield from _served(account, root, config, key)


def _call(box: Mailbox, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return structured(call(box.url, box.key, tool, arguments))


def _listed(box: Mailbox, **filters: Any) -> list[dict[str, Any]]:
    def page(arguments: dict[str, Any]) -> Any:
        return call(box.url, box.key, "list_emails", arguments)

    return every_email(page, **filters)


def _where(emails: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
    return [(e["subject"], e["folderAlias"], e["alsoInFolders"]) for e in emails]


def test_only_the_folders_init_proposed_are_synchronized(mailbox: Mailbox) -> None:
    (account,) = _call(mailbox, "list_accounts", {})["accounts"]
    folders = sorted(f["alias"] for f in account["folders"])
    assert folders == sorted(
        ["INBOX", LABEL, SENT_MAIL, "[Gmail]/Drafts", "[Gmail]/Spam", "[Gmail]/Trash"]
    )
    assert all(f["wasSynchronized"] for f in account["folders"])


def test_a_listing_across_folders_shows_each_message_once(mailbox: Mailbox) -> None:
    emails = _listed(mailbox)
    assert _where(emails) == [
        ("Re: Re: Quarterly plan", "INBOX", []),
        ("Re: Quarterly plan", SENT_MAIL, []),
        ("Quarterly plan", "INBOX", [LABEL]),
        ("Starred note", "INBOX", []),
        ("Offsite venue", LABEL, []),
        ("Budget review", "INBOX", [LABEL]),
    ]
    assert len({e["storedEmailId"] for e in emails}) == len(emails)
    both = _listed(mailbox, folders=["INBOX", LABEL])
    assert [e["storedEmailId"] for e in both] == [
        e["storedEmailId"] for e in emails if e["folderAlias"] in ("INBOX", LABEL)
    ]


def test_a_folder_named_alone_lists_its_own_copies(mailbox: Mailbox) -> None:
    everywhere = {e["subject"]: e for e in _listed(mailbox)}
    work = _listed(mailbox, folders=[LABEL])
    assert _where(work) == [
        ("Quarterly plan", LABEL, []),
        ("Offsite venue", LABEL, []),
        ("Budget review", LABEL, []),
    ]
    own = {e["subject"]: e["storedEmailId"] for e in work}
    assert own["Budget review"] != everywhere["Budget review"]["storedEmailId"]
    assert own["Offsite venue"] == everywhere["Offsite venue"]["storedEmailId"]


def test_a_search_across_folders_finds_each_message_once(mailbox: Mailbox) -> None:
    found = _call(mailbox, "search_emails", {"queryText": "budget"})["matches"]
    assert [(m["summary"]["folderAlias"], m["summary"]["alsoInFolders"]) for m in found] == [
        ("INBOX", [LABEL])
    ]
    alone = _call(mailbox, "search_emails", {"queryText": "budget", "folders": [LABEL]})
    assert [m["summary"]["folderAlias"] for m in alone["matches"]] == [LABEL]
    patterned = _call(mailbox, "search_emails", {"matchPattern": "Quarterly"})["matches"]
    assert sorted(m["summary"]["subject"] for m in patterned) == [
        "Quarterly plan",
        "Re: Quarterly plan",
        "Re: Re: Quarterly plan",
    ]


def _read(box: Mailbox, **selection: Any) -> list[dict[str, Any]]:
    read = _call(box, "get_email_content", selection)
    assert read["unreadThreadMessages"] == []
    return [e["content"] for e in read["emails"]]


def test_a_conversation_holds_each_message_once(mailbox: Mailbox) -> None:
    listed = {e["subject"]: e for e in _listed(mailbox)}
    thread_id = listed["Quarterly plan"]["threadId"]
    read = _read(mailbox, threadId=thread_id)
    assert [c["headers"]["subject"] for c in read] == [
        "Quarterly plan",
        "Re: Quarterly plan",
        "Re: Re: Quarterly plan",
    ]
    assert [c["folderAlias"] for c in read] == ["INBOX", SENT_MAIL, "INBOX"]
    blocks = [c["thread"] for c in read]
    assert [b["messageCount"] for b in blocks] == [3, 3, 3]
    assert [b["position"] for b in blocks] == [0, 1, 2]
    ids = [listed[s]["storedEmailId"] for s in ("Quarterly plan", "Re: Quarterly plan")]
    assert [b["inReplyToStoredEmailId"] for b in blocks] == [None, *ids]


def test_a_copy_read_by_its_own_identifier_takes_its_message_s_place(mailbox: Mailbox) -> None:
    (work_copy,) = [
        e for e in _listed(mailbox, folders=[LABEL]) if e["subject"] == "Quarterly plan"
    ]
    (content,) = _read(mailbox, storedEmailIds=[work_copy["storedEmailId"]])
    assert content["folderAlias"] == LABEL
    block = content["thread"]
    assert (block["messageCount"], block["position"]) == (3, 0)
    assert [m["subject"] for m in block["otherMessages"]] == [
        "Re: Quarterly plan",
        "Re: Re: Quarterly plan",
    ]


def test_keeping_all_mail_adds_the_archived_mail_and_still_lists_each_message_once(
    gmail: DovecotServer, tmp_path: Path
) -> None:
    account = _account(gmail)
    config, key = _init(account, tmp_path)
    with config.open("a", encoding="utf-8") as file:
        file.write(f'\n[[Accounts.Folders]]\nRemote = "{ALL_MAIL}"\nRole = "All"\n')
    _sync(account, config)
    for box in _served(account, tmp_path, config, key):
        emails = _listed(box)
        assert _where(emails) == [
            ("Re: Re: Quarterly plan", "INBOX", [ALL_MAIL]),
            ("Re: Quarterly plan", SENT_MAIL, [ALL_MAIL]),
            ("Quarterly plan", "INBOX", [LABEL, ALL_MAIL]),
            ("Starred note", "INBOX", [ALL_MAIL]),
            ("Archived receipt", ALL_MAIL, []),
            ("Offsite venue", LABEL, [ALL_MAIL]),
            ("Budget review", "INBOX", [LABEL, ALL_MAIL]),
        ]
        assert len(_listed(box, folders=[ALL_MAIL])) == len(LETTERS)
        thread_id = emails[0]["threadId"]
        assert len(_read(box, threadId=thread_id)) == 3


def test_a_filter_reads_the_flags_each_copy_carries(gmail: DovecotServer, tmp_path: Path) -> None:
    """Dovecot keeps flags per copy, as Fastmail and Exchange do, and Gmail's copies differ
    until each folder has been synchronized since a change: a copy failing a filter never
    hides one that passes."""
    account = _account(gmail)
    user = account.username
    gmail.doveadm("flags", "add", "-u", user, "\\Flagged", "mailbox", LABEL, "subject", "Budget")
    gmail.doveadm("flags", "add", "-u", user, "\\Seen", "mailbox", "INBOX", "subject", "Quarterly")
    config, key = _init(account, tmp_path)
    _sync(account, config)
    for box in _served(account, tmp_path, config, key):
        flagged = _listed(box, isRemotelyFlagged=True)
        assert _where(flagged) == [("Budget review", LABEL, ["INBOX"])]
        assert ("Budget review", "INBOX", [LABEL]) in _where(_listed(box, isRemotelyFlagged=False))
        assert _where(_listed(box, isRemotelySeen=False)) == [
            ("Re: Quarterly plan", SENT_MAIL, []),
            ("Quarterly plan", LABEL, ["INBOX"]),
            ("Starred note", "INBOX", []),
            ("Offsite venue", LABEL, []),
            ("Budget review", "INBOX", [LABEL]),
        ]
        assert _where(_listed(box, isRemotelySeen=True)) == [
            ("Re: Re: Quarterly plan", "INBOX", []),
            ("Quarterly plan", "INBOX", [LABEL]),
        ]
        found = _call(box, "search_emails", {"queryText": "budget", "isRemotelyFlagged": True})
        assert [(m["summary"]["folderAlias"], m["summary"]["alsoInFolders"])
                for m in found["matches"]] == [(LABEL, ["INBOX"])]  # fmt: skip
