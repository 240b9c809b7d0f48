"""A References header that names an identifier twice, read from raw mail and compared with
the THREAD=REFS answer of a running Dovecot for the same mailbox.

RFC 5256 section 2.2 step 1 links the References identifiers in the order written and makes
the last one the parent; a repeat is an ordinary identifier there (the link it would make
back to an earlier one closes a loop and is skipped). Reading the header with its repeats
dropped would take the last *distinct* identifier instead, a different message.

Real mail writes such headers: in ``spamassassin-easy-ham-1`` message 00633 ends its
References with the identifier it opened with (00617's), after 00610's.
"""

from __future__ import annotations

import contextlib
import imaplib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from log_audit import register, register_headers
from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.conversations import (
    ThreadInput,
    assemble_conversations,
    thread_input_from,
)
from servers.dovecot import ImapAccount

from .support import Layout, layout_of_conversations, layout_of_trees, parse_thread_answer


def _mail(number: int, message_id: str, references: str | None = None) -> bytes:
    lines = [
        "From: Sender Person <sender@example.org>",
        "To: receiver@example.net",
        f"Subject: Repeated reference case {number}",
        f"Date: Sun, 01 Mar 2026 12:{number:02d}:00 +0000",
        f"Message-ID: <{message_id}>",
    ]
    if references is not None:
        lines.append(f"References: {references}")
    return ("\r\n".join(lines) + "\r\n\r\nBody.\r\n").encode("ascii")


# Mailbox order is UID order: 1 a, 2 x, 3 m, 4 n, 5 p.
MAILBOX = [
    _mail(1, "a@example.org"),
    _mail(2, "x@example.org"),
    # The parent is a (named last), not x (the last distinct identifier).
    _mail(3, "m@example.org", "<a@example.org> <x@example.org> <a@example.org>"),
    # A repeat next to itself.
    _mail(4, "n@example.org", "<x@example.org> <x@example.org>"),
    # A repeat around a stored message, naming an identifier nobody stored.
    _mail(5, "p@example.org", "<gone@example.org> <m@example.org> <gone@example.org>"),
]


# A thread of the corpus, in mailbox order: 00610 starts it, 00617 answers it, 00620
# answers 00617, 00633 names 00617, 00610 and 00617 again, 00662 names 00610 and 00617.
REAL_THREAD = "messages/spamassassin-easy-ham-1"
REAL_FILES = ("00610.", "00617.", "00620.", "00633.", "00662.")


def _ours(mailbox: Sequence[bytes] = MAILBOX) -> Layout:
    inputs: list[ThreadInput] = [
        thread_input_from(str(uid), normalize_message(raw))
        for uid, raw in enumerate(mailbox, start=1)
    ]
    return layout_of_conversations(assemble_conversations(inputs))


def _real_thread(corpora: Path) -> list[bytes]:
    folder = corpora / REAL_THREAD
    return [next(folder.glob(f"{prefix}*")).read_bytes() for prefix in REAL_FILES]


def test_the_last_reference_is_the_parent_even_when_it_repeats_an_earlier_one() -> None:
    ours = _ours()
    assert ours.parent["3"] == "1"
    assert ours.parent["2"] == "1"  # x placed under a by the same References header
    assert ours.parent["4"] == "2"


def test_a_real_reply_repeating_its_first_reference_sits_under_it(corpora: Path) -> None:
    ours = _ours(_real_thread(corpora))
    assert ours.parent == {"1": None, "2": "1", "3": "2", "4": "2", "5": "2"}


@pytest.fixture
def imap(imap_account: ImapAccount) -> Iterator[imaplib.IMAP4]:
    client = imaplib.IMAP4(imap_account.host, imap_account.port, timeout=20)
    client.login(imap_account.username, imap_account.password)
    try:
        yield client
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            client.logout()


def _dovecot_refs(imap: imaplib.IMAP4, mailbox: Sequence[bytes]) -> Layout:
    """Dovecot's THREAD=REFS answer for ``mailbox`` appended in order, keyed by UID."""
    for raw in mailbox:
        typ, data = imap.append("INBOX", None, None, raw)
        assert typ == "OK", data
    typ, _ = imap.select("INBOX", readonly=True)
    assert typ == "OK"
    typ, data = imap.uid("THREAD", "REFS", "UTF-8", "ALL")
    assert typ == "OK", data
    answer = b" ".join(item for item in data if isinstance(item, bytes)).decode("ascii")
    found = layout_of_trees(parse_thread_answer(answer))
    assert set(found.parent) == {str(uid) for uid in range(1, len(mailbox) + 1)}
    return found


def _agree(ours: Layout, dovecot: Layout) -> None:
    assert ours.parent == dovecot.parent
    assert sorted(map(sorted, ours.threads)) == sorted(map(sorted, dovecot.threads))


def test_repeated_references_thread_as_dovecot_refs_threads_them(imap: imaplib.IMAP4) -> None:
    register(*(f"Repeated reference case {n}" for n in range(1, len(MAILBOX) + 1)))
    _agree(_ours(), _dovecot_refs(imap, MAILBOX))


def test_a_real_thread_with_a_repeated_reference_agrees_with_dovecot_refs(
    imap: imaplib.IMAP4, corpora: Path
) -> None:
    mailbox = _real_thread(corpora)
    for raw in mailbox:
        register_headers(raw)
    _agree(_ours(mailbox), _dovecot_refs(imap, mailbox))
