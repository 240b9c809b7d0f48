"""Text a person never sees in an HTML body reaches neither the plain text (what a read
returns and the lexical index holds) nor the sanitized HTML, whichever way it is hidden;
text beside it that does show is kept."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_audit import register
from mailfathom.adapters.html.sanitize import NhHtmlSanitizer
from mailfathom.adapters.mime import normalize_message
from mailfathom.app.reading.get_email_content import ContentRequest
from mailfathom.app.reading.search_emails import SearchRequest
from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.domain.access import ALL_PERMISSIONS, Caller
from servers.dovecot import ImapAccount
from sync.helpers import RemoteMailbox, imap_account_config, open_services, stored_rows

from .parsed import parse

TECHNIQUES = {
    "display none": '<div style="display:none">Secret</div>',
    "display none, spaced and important": '<span style="DISPLAY : None !important">Secret</span>',
    "hidden attribute": "<p hidden>Secret</p>",
    "visibility hidden": '<span style="visibility:hidden">Secret</span>',
    "visibility collapse": '<table><tr style="visibility:collapse"><td>Secret</td></tr></table>',
    "zero font size": '<span style="font-size:0">Secret</span>',
    "zero font size in pixels": '<span style="font-size:0px;line-height:0">Secret</span>',
    "one-pixel font": '<span style="font-size:1px">Secret</span>',
    "font shorthand 0/0": '<span style="font:0/0 a">Secret</span>',
    "relative size of a zero font": (
        '<div style="font-size:0"><span style="font-size:80%">Secret</span></div>'
    ),
    "zero opacity": '<div style="opacity:0">Secret</div>',
    "near-zero opacity": '<div style="opacity:0.01">Secret</div>',
    "white on white": '<span style="color:#ffffff">Secret</span>',
    "white on the default page": '<font color="white">Secret</font>',
    "same colour as the cell": (
        '<table bgcolor="#336699"><tr><td><span style="color:rgb(51,102,153)">Secret</span>'
        "</td></tr></table>"
    ),
    "near colour of a background shorthand": (
        '<div style="background:#000 no-repeat"><p style="color:#050505">Secret</p></div>'
    ),
    "transparent text": '<span style="color:transparent">Secret</span>',
    "transparent rgba text": '<span style="color:rgba(0,0,0,0)">Secret</span>',
    "HTML comment": "<!-- Secret -->",
    "conditional comment": "<!--[if mso]><p>Secret</p><![endif]-->",
    "head title": "<html><head><title>Secret</title></head><body></body></html>",
    "head style": "<html><head><style>/* Secret */</style></head><body></body></html>",
    "preheader max-height 0": (
        '<div style="max-height:0;overflow:hidden;mso-hide:all">Secret</div>'
    ),
    "preheader height 0 px": '<div style="height:0px;overflow:hidden">Secret</div>',
    "zero width clipped": '<div style="max-width:0;overflow:hidden">Secret</div>',
    "script": "<script>var Secret = 1;</script>",
}
# Shapes that look alike but show their text.
SHOWN = {
    "white on a dark cell": (
        '<table><tr><td bgcolor="#000000"><span style="color:#fff">Shown</span></td></tr></table>'
    ),
    "white on a background image": (
        '<div style="background-image:url(x.png);background-color:#fff">'
        '<span style="color:#fff">Shown</span></div>'
    ),
    "size set again inside a zero font": (
        '<div style="font-size:0"><span style="font-size:14px">Shown</span></div>'
    ),
    "visible inside hidden visibility": (
        '<div style="visibility:hidden"><span style="visibility:visible">Shown</span></div>'
    ),
    "dark text set again inside white text": (
        '<div style="color:#fff"><p style="color:#222">Shown</p></div>'
    ),
    "clipped but with a height": '<div style="max-height:40px;overflow:hidden">Shown</div>',
    "half opacity": '<div style="opacity:0.5">Shown</div>',
}


def _document(hidden: str) -> str:
    return f"<html><body><p>Before</p>{hidden}<p>After</p></body></html>"


def _plain(html: str) -> str:
    raw = b"Content-Type: text/html; charset=utf-8\r\n\r\n" + html.encode("utf-8")
    return normalize_message(raw).plain_text


@pytest.mark.parametrize("hidden", TECHNIQUES.values(), ids=TECHNIQUES.keys())
def test_hidden_text_is_not_in_the_plain_text(hidden: str) -> None:
    text = _plain(_document(hidden))
    assert "Secret" not in text
    assert text.split() == ["Before", "After"]


@pytest.mark.parametrize("hidden", TECHNIQUES.values(), ids=TECHNIQUES.keys())
def test_hidden_text_is_not_in_the_sanitized_html(hidden: str) -> None:
    sanitized = parse(NhHtmlSanitizer().sanitize(_document(hidden)))
    assert sanitized.text.split() == ["Before", "After"]
    assert sanitized.comments == 0


@pytest.mark.parametrize("shown", SHOWN.values(), ids=SHOWN.keys())
def test_text_that_shows_is_kept(shown: str) -> None:
    assert _plain(_document(shown)).split() == ["Before", "Shown", "After"]
    assert parse(NhHtmlSanitizer().sanitize(_document(shown))).text.split() == [
        "Before",
        "Shown",
        "After",
    ]


@pytest.mark.parametrize("hidden", TECHNIQUES.values(), ids=TECHNIQUES.keys())
def test_hidden_text_is_left_out_of_a_document_too_deep_for_the_tree(hidden: str) -> None:
    """Past the 2048 levels libxml2 reads, the words are read by a tokenizer: it too leaves
    hidden text out."""
    html = "<html><body>" + "<font size=2>" * 3000 + f"<p>Before</p>{hidden}<p>After</p>"
    assert _plain(html).split() == ["Before", "After"]
    assert parse(NhHtmlSanitizer().sanitize(html)).text.split() == ["Before", "After"]


@pytest.fixture
def remote(imap_account: ImapAccount) -> Iterator[RemoteMailbox]:
    mailbox = RemoteMailbox(imap_account)
    yield mailbox
    mailbox.close()


def test_hidden_words_are_neither_searchable_nor_read(
    tmp_path: Path, imap_account: ImapAccount, remote: RemoteMailbox
) -> None:
    hidden = "".join(
        body.replace("Secret", f"hiddenword{n}") for n, body in enumerate(TECHNIQUES.values())
    )
    register("Visible zanzibarword", *(f"hiddenword{n}" for n in range(len(TECHNIQUES))))
    remote.append(
        b"From: list@example.org\r\nTo: reader@example.net\r\nSubject: Offer\r\n"
        b"Content-Type: text/html; charset=utf-8\r\n\r\n"
        + f"<html><body><p>Visible zanzibarword</p>{hidden}</body></html>".encode()
    )
    account = imap_account_config(imap_account)
    reader = Caller(permissions=ALL_PERMISSIONS, label="reader")
    with open_services(tmp_path, account) as services:
        services.account_synchronizer().run_once(account)
        search = services.reading().search
        shown = search.search(reader, SearchRequest("zanzibarword", SelectionInput()))
        found = [
            search.search(reader, SearchRequest(f"hiddenword{n}", SelectionInput())).matches
            for n in range(len(TECHNIQUES))
        ]
        ids = [str(r.stored_email_id) for r in stored_rows(services, account.account_id)]
        read = services.reading().content.read(
            reader, ContentRequest(stored_email_ids=ids, include_sanitized_html=True)
        )
    assert len(shown.matches) == 1
    assert all(not matches for matches in found)
    content = read.emails[0].content
    assert content is not None
    assert content.body.plain_text.text.split() == ["Visible", "zanzibarword"]
    assert content.body.sanitized_html is not None
    assert parse(content.body.sanitized_html.text).text.split() == ["Visible", "zanzibarword"]
