"""Conversations over notmuch's threading test corpora.

The corpora live in ``messages/notmuch/test/corpora``; the notmuch test scripts that use
them are not part of the shared corpora. Each expectation below is therefore derived from
RFC 5256 section 2.2 applied to the headers quoted in the test, and compared with the
outcome notmuch publishes where that outcome concerns identifier-only threading (notmuch
never joins messages by subject either). Two notmuch behaviours are deliberately not
shared, and the tests say where:

* notmuch prefers In-Reply-To over References when choosing a parent; RFC 5256 (and
  Dovecot's THREAD=REFS, the rule followed here) reads References first and uses
  In-Reply-To only when References names nothing (``threading/parent-priority``);
* notmuch shows a reference loop in date order; RFC 5256 step 1.B refuses the link
  that would close the loop, so one message of the loop stays the parent of the other
  (``broken/loop``).

What notmuch and the assembler share is the treatment of duplicate Message-IDs: notmuch
stores one message per identifier with several files, the assembler puts all copies on
one node, so in both every copy lands in the same conversation.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from mailfathom.domain.conversations import (
    Conversation,
    ThreadInput,
    assemble_conversations,
)

from .support import check_invariants, layout_of_conversations, thread_input_of_file

pytestmark = pytest.mark.corpus

CORPORA = "messages/notmuch/test/corpora"


def load(corpora: Path, folder: str) -> list[ThreadInput]:
    base = corpora / CORPORA / folder
    return [
        thread_input_of_file(path.relative_to(base).as_posix(), path)
        for path in sorted(p for p in base.rglob("*") if p.is_file())
    ]


def tree(conversations: list[Conversation]) -> list[list[tuple[str, str | None, int]]]:
    return [[(p.key, p.parent_key, p.depth) for p in c.members] for c in conversations]


def test_a_reply_that_names_an_unstored_message_keeps_the_real_root(corpora: Path) -> None:
    """threading/ghost-root, first case.

    fake-root (sent at the same instant as real-root) has
    ``References: <000-real-root> <001-child> <nonexistent-message>``: its parent is the
    unstored ``nonexistent-message``, which its References place under 001-child. Placeholders
    are skipped, so fake-root hangs under child, and real-root stays the only root.
    """
    inputs = [m for m in load(corpora, "threading/ghost-root") if "." not in m.key]
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    assert tree(conversations) == [
        [
            ("real-root", None, 0),
            ("child", "real-root", 1),
            ("fake-root", "child", 2),  # Jun 16: before the grand-children (Jun 17)
            ("grand-child", "child", 2),
            ("great-grand-child", "grand-child", 3),
            ("grand-child2", "child", 2),
        ]
    ]


def test_replies_to_a_missing_first_message_share_one_conversation(corpora: Path) -> None:
    """threading/ghost-root, second case: a ticket system's replies.

    Both ticket replies name ``<RT-Ticket-33575@...>`` (never stored) first in References;
    the auto-reply also names the original note, which answers nothing itself. The
    auto-reply's References make the ticket placeholder the original note's parent, so the
    note and the "Resolved" message are two roots under one placeholder: one conversation,
    as in notmuch, which shows the note first.
    """
    inputs = [m for m in load(corpora, "threading/ghost-root") if "." in m.key]
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    note = "1529425589.M615261P21663.len:2,S"
    auto_reply = "1532672447.R3166642290392477575.len:2,S"
    resolved = "1532672447.R6968667928580738175.len:2,S"
    assert tree(conversations) == [[(note, None, 0), (auto_reply, note, 1), (resolved, None, 0)]]
    assert [p.key for p in conversations[0].roots] == [note, resolved]


def test_references_take_priority_over_in_reply_to(corpora: Path) -> None:
    """threading/parent-priority: notmuch's expectation is not followed here.

    child: ``In-Reply-To: <B00-root>`` but ``References: <B00--root>`` (a typo);
    grand-child: ``In-Reply-To: <B01-child>``, ``References: <B01-child> <B00-root>``.
    RFC 5256 reads References only: child answers the unstored ``B00--root``;
    grand-child answers root, and its References chain makes child the parent of root,
    which names no parent of its own. notmuch, preferring In-Reply-To, builds
    root > child > grand-child. Both keep the three messages in one conversation.
    """
    inputs = load(corpora, "threading/parent-priority")
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    assert tree(conversations) == [
        [("cur/child", None, 0), ("cur/root", "cur/child", 1), ("cur/grand-child", "cur/root", 2)]
    ]


def test_a_reference_loop_keeps_one_link_and_both_messages(corpora: Path) -> None:
    """broken/loop: each message's In-Reply-To names the other.

    Read in sent order, loop-12 (Jun 16) is placed under loop-21; loop-21 (Jun 17) cannot
    then be placed under loop-12 without a loop, so it stays the root (RFC 5256 step 1.B).
    notmuch lists the two by date instead (12, then 21); what both guarantee is that
    neither message is lost and the conversation is finite.
    """
    inputs = load(corpora, "broken/loop")
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    assert tree(conversations) == [[("loop-21", None, 0), ("loop-12", "loop-21", 1)]]


def test_copies_of_one_message_id_share_a_conversation(corpora: Path) -> None:
    """duplicate: three Message-IDs stored 2, 2 and 5 times.

    The five copies of ``<87r2ecrr6x.fsf@zephyr.silentflame.com>`` each name a different
    unstored parent; the first copy in canonical order (all are sent at the same instant,
    so the key decides) places the node, the others' References name placeholders that
    end up empty. Every copy is a root of its identifier's single conversation, as the
    copies are one message with several files in notmuch.
    """
    inputs = load(corpora, "duplicate")
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    assert [c.keys for c in conversations] == [
        ("msg-1-1:2,", "msg-1-2:2,"),
        ("msg-2-1:2,", "msg-2-2:2,"),
        ("msg-3-1:2,", "msg-3-2:2,", "msg-3-3:2,", "msg-3-4:2,", "msg-3-5:2,"),
    ]
    assert all(p.parent_key is None and p.depth == 0 for c in conversations for p in c.members)


def test_the_default_corpus_has_notmuchs_threads(corpora: Path) -> None:
    """default: 53 files, 52 Message-IDs (``<20091117232137.GA7669@griffis1.net>`` twice).

    notmuch finds 24 threads in it (test/T090-search-output.sh, ``--output=threads '*'``)
    with these sizes in distinct messages (the ``[n/n]`` counts of
    test/emacs.expected-output/notmuch-search-tag-inbox, plus the two single messages
    added to the corpus later): ten of 1, seven of 2, four of 3, one each of 4, 5 and 7.
    """
    inputs = load(corpora, "default")
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)
    id_of = {m.key: m.message_id for m in inputs}
    sizes = Counter(len({id_of[key] for key in c.keys}) for c in conversations)
    assert len(conversations) == 24
    assert sizes == Counter({1: 10, 2: 7, 3: 4, 4: 1, 5: 1, 7: 1})
    layout = layout_of_conversations(conversations)
    assert layout.members("bar/18:2,") == layout.members("cur/51:2,")  # the two copies


@pytest.mark.parametrize("folder", ["default", "lkml", "threading", "broken", "duplicate"])
def test_whole_corpora_assemble_the_same_in_any_order(corpora: Path, folder: str) -> None:
    inputs = load(corpora, folder)
    expected = assemble_conversations(inputs)
    check_invariants(inputs, expected)
    shuffled = list(inputs)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert assemble_conversations(shuffled) == expected
