"""What a passage reads of a reply, on the reply fixtures of talon and of zapier's and
GitHub's email_reply_parser (../shared/corpora/replies): the sender's own text, without the
answered mail, its attribution, or a phone's signature line.

Each fixture's expected text is what its project's own tests expect to be visible, with
whitespace collapsed; the two projects share most fixtures, and both copies are read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.passages import passages_of
from mailfathom.domain.reply_text import authored_text

PARSERS = ("github-email_reply_parser", "zapier-email-reply-parser")
RIAK = (
    "Hi folks What is the best way to clear a Riak bucket of all key, values after running a "
    "test? I am currently using the Java HTTP API. -Abhishek Kona"
)
ANOTHER = "Here is another email"
VISIBLE = {
    "correct_sig.txt": "this is an email with a correct -- signature.",
    "email_1_1.txt": RIAK,
    "email_1_3.txt": "Oh thanks. Having the function would be great. -Abhishek Kona",
    "email_1_4.txt": "Awesome! I haven't had another problem with it.",
    "email_1_6.txt": "I get proper rendering as well. Sent from a magnificent torch of pixels",
    "email_1_7.txt": ":+1:",
    "email_1_8.txt": "I will reply under this one and under this.",
    "email_2_2.txt": "Outlook with a reply directly above line",
    "email_BlackBerry.txt": ANOTHER,
    "email_iPhone.txt": ANOTHER,
    "email_multi_word_sent_from_my_mobile_device.txt": ANOTHER,
    "email_sent_from_my_not_signature.txt": (
        "Here is another email Sent from my desk, is much easier then my mobile phone."
    ),
    "email_sig_delimiter_in_middle_of_line.txt": (
        "Hi there! Stuff happened. And here is a fix -- this is not a signature. kthxbai"
    ),
    "email_bullets.txt": (
        "test 2 this should list second and have spaces and retain this formatting "
        "- how about bullets - and another"
    ),
    "greedy_on.txt": (
        "On your remote host you can run: telnet 127.0.0.1 52698 This should connect to "
        "TextMate (on your Mac, via the tunnel). If that fails, the tunnel is not working."
    ),
    "pathological.txt": (
        "I think you're onto something. I will try to fix the problem as soon as I get back "
        "to a computer."
    ),
    # zapier's alone: an unmarked quote under a two-line attribution, and Outlook's header
    # block without a divider above it.
    "email_gmail.txt": "This is a test for inbox replying to a github message.",
    "email_partial_quote_header.txt": (
        "On your remote host you can run: telnet 127.0.0.1 52698 This should connect to "
        "TextMate (on your Mac, via the tunnel). If that fails, the tunnel is not working."
    ),
    "email_headers_no_delimiter.txt": "And another reply!",
}
# Fixtures whose expected text starts the visible text and the answered mail never follows.
STARTS = {
    "email_1_2.txt": ("Hi, You can list the keys", "Hi folks"),
    "email_1_5.txt": ("One: Here's what I've got.", "wrote:"),
    "email_2_1.txt": ("Outlook with a reply", "Google Apps Sync"),
    "email_2_3.txt": ("Outlook with a reply", "Subject:"),
    "email_one_is_not_on.txt": ("Thank, this is really helpful.", "wrote:"),
    # GitHub's alone: a line of thousands of `>` after the text, read in bounded time.
    "email_long_quote.txt": ("Hi folks What is the best way to clear a Riak bucket", "wrote:"),
}


def _visible(path: Path) -> str:
    return " ".join(authored_text(path.read_text("utf-8"), 100_000).split())


def _fixtures(corpora: Path) -> list[Path]:
    found = [
        path
        for parser in PARSERS
        for path in sorted((corpora / "replies" / parser / "test" / "emails").glob("*.txt"))
    ]
    assert len(found) > 40
    return found


@pytest.mark.corpus
def test_the_parsers_fixtures_read_as_their_visible_text(corpora: Path) -> None:
    checked = 0
    for path in _fixtures(corpora):
        if path.name in VISIBLE:
            assert _visible(path) == VISIBLE[path.name], path
            checked += 1
        elif path.name in STARTS:
            start, never = STARTS[path.name]
            assert _visible(path).startswith(start), path
            assert never not in _visible(path), path
            checked += 1
    assert checked == 46


@pytest.mark.corpus
def test_every_mail_programs_reply_reads_as_the_reply_alone(corpora: Path) -> None:
    """talon's standard replies: the same answer ("Hello") to the same mail, as Android,
    AOL, Apple Mail (twice), Comcast, Gmail, Hotmail, iPhone, Outlook, Sparrow, Thunderbird
    and Yahoo quote it."""
    replies = sorted((corpora / "replies/talon/tests/fixtures/standard_replies").glob("*.eml"))
    assert len(replies) == 12
    for path in replies:
        message = normalize_message(path.read_bytes())
        assert authored_text(message.plain_text, 100_000) == "Hello", path.name
        title = re.sub(r"^(?:re|fwd?): ", "", message.subject or "", flags=re.IGNORECASE)
        assert passages_of(message.subject, message.plain_text) == [f"{title}\nHello"], path.name
