"""HTML-only mail synchronized from Dovecot and read back: its text is what a reader sees,
searchable, and short enough that ten of them fit in one read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register, register_headers
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.reading.views import TruncatedBy
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services, stored_rows

from .test_html_text import newsletter_paths

_READER = Caller(permissions=ALL_PERMISSIONS, label="reader")


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


@pytest.mark.corpus
def test_ten_html_newsletters_are_all_read_whole_in_one_call(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, corpora: Path
) -> None:
    for path in newsletter_paths(corpora):
        raw = path.read_bytes()
        register_headers(raw)
        remote.append(raw)
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        ids = [str(r.stored_email_id) for r in stored_rows(services, account.account_id)]
        assert len(ids) == 10
        # The default budget of the call, shared by the ten bodies.
        read = services.reading().content.read(_READER, ContentRequest(stored_email_ids=ids))
    assert all(entry.content is not None for entry in read.emails)
    bodies = [entry.content.body.plain_text for entry in read.emails if entry.content]
    words = [len(body.text.split()) for body in bodies]
    assert min(words) > 50, words
    assert {body.truncated_by for body in bodies} == {TruncatedBy.NONE}


_SHOWN_BY_A_BROWSER = {
    "after </html>": (
        "<html><body><p>Main text</p></body></html>\r\n<p>Appended zanzibarfooter</p>\r\n"
    ),
    "in the head": (
        "<html><head><title>Offer</title><o:p>Appended zanzibarfooter</o:p></head>\r\n"
        "<body><p>Main text</p></body></html>\r\n"
    ),
    "past 256 nested elements": (
        "<html><body>" + "<font size=2>" * 300 + "Main text</body></html>\r\n"
        "<html><body><p>Appended zanzibarfooter</p></body></html>\r\n"
    ),
}


@pytest.mark.parametrize("html", _SHOWN_BY_A_BROWSER.values(), ids=_SHOWN_BY_A_BROWSER.keys())
def test_words_a_browser_shows_are_searchable_and_read(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox, html: str
) -> None:
    register("Appended zanzibarfooter", "Main text")
    remote.append(
        b"From: list@example.org\r\nTo: reader@example.net\r\nSubject: List post\r\n"
        b"Content-Type: text/html; charset=utf-8\r\n\r\n" + html.encode()
    )
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        found = services.reading().search.search(
            _READER, SearchRequest("zanzibarfooter", SelectionInput())
        )
        ids = [str(r.stored_email_id) for r in stored_rows(services, account.account_id)]
        read = services.reading().content.read(_READER, ContentRequest(stored_email_ids=ids))
    assert len(found.matches) == 1
    assert any("**zanzibarfooter**" in s for s in found.matches[0].snippets)
    content = read.emails[0].content
    assert content is not None
    assert sorted(content.body.plain_text.text.split()) == [
        "Appended",
        "Main",
        "text",
        "zanzibarfooter",
    ]
