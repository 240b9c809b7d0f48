"""Inline text after an HTML part, synchronized from Dovecot, is searchable and readable."""

from __future__ import annotations

from pathlib import Path

from log_audit import register
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services

from .build import raw

_READER = Caller(permissions=ALL_PERMISSIONS, label="reader")
_HTML = "<p>Quarterly figures attached inline.</p>"
_FOOTER = "Unsubscribe words: marmoset lantern."

MESSAGE = raw(
    f"""
    From: Sender Person <sender@example.org>
    To: receiver@example.net
    Subject: Inline footer after markup
    Date: Sun, 01 Mar 2026 12:00:00 +0000
    Message-ID: <inline-footer@example.org>
    MIME-Version: 1.0
    Content-Type: multipart/mixed; boundary=mix

    --mix
    Content-Type: text/html; charset=utf-8
    Content-Disposition: inline

    {_HTML}
    --mix
    Content-Type: text/plain; charset=utf-8
    Content-Disposition: inline

    {_FOOTER}
    --mix--
    """
)


def test_inline_text_after_html_is_indexed_and_in_the_read_body(
    tmp_path: Path, imap_account: ImapAccount
) -> None:
    register("Inline footer after markup", _HTML, _FOOTER, "sender@example.org")
    remote = RemoteMailbox(imap_account)
    try:
        remote.append(MESSAGE)
    finally:
        remote.close()
    account = imap_account_config(imap_account)
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        reading = services.reading()

        found = reading.search.search(_READER, SearchRequest("marmoset", SelectionInput()))
        (match,) = found.matches
        assert match.summary.subject == "Inline footer after markup"

        wanted = ContentRequest(
            stored_email_ids=[str(match.summary.stored_email_id)], include_sanitized_html=True
        )
        (entry,) = reading.content.read(_READER, wanted).emails
        assert entry.content is not None
        body = entry.content.body
        assert body.plain_text.text.index("Quarterly figures") < body.plain_text.text.index(
            "marmoset lantern"
        )
        assert body.sanitized_html is not None
        assert "marmoset lantern" in body.sanitized_html.text
        assert entry.content.attachments == ()
