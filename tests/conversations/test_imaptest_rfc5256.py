"""Conversations agree with the THREAD REFERENCES answers of Dovecot's imaptest scripts.

``threading/imaptest-rfc5256`` holds imaptest scripts (``thread*``) with their mailboxes
(``thread*.mbox``). A script either starts with every message of the mailbox
(``messages: all``) or with an empty one (``state: created``) that ``append`` fills in
mailbox order; ``store ... +flags \\deleted`` and ``expunge`` remove messages; each
``thread references`` command is followed by the expected ``* THREAD`` line, which uses
sequence numbers (renumbered after every expunge).

The assembler sees the messages present at each THREAD command, keyed by UID (mailbox
position). None of these messages has a Date header; IMAP servers then sort by the
received date, which imaptest takes from the mbox ``From`` line, so that date is given as
``sent_at`` here. REFERENCES orders threads by their root's date (a placeholder root by
its first child's), which is also the order of the assembler's conversations, so the
whole answer is compared: membership, parents and reading order.

Used as written
    thread (loop refusal across References, and the answer after expunging the root),
    thread5 (In-Reply-To, siblings ordered by date then UID, placeholder root after
    expunge and append), thread6 (messages without Message-ID under one placeholder
    root), thread8 (a copy appended after the original was expunged).

Used in part
    thread7, first answer ``(1 (2 3)(4))``: messages 2 and 4 carry the same Message-ID.
    RFC 5256 gives the later one a fresh identifier, so 4 becomes a sibling of 2; the
    assembler keeps both on one node (see `mailfathom.domain.conversations`), which
    gives 4 the same parent (1) and the same conversation, but lists it right after 2,
    before 2's reply 3. Membership and parents are compared; the order is not. The
    answer after expunging 2 is compared whole.

Replaced by the documented duplicate rule
    thread2 expects ``(1)(2)`` for two copies of one Message-ID without references: two
    conversations under RFC 5256, one conversation with two roots under the shared-node
    rule. The test asserts the latter.

Excluded
    thread3 and thread4: their expected answers come from step 5 (base-subject merging:
    "foo" and "Re: foo" are joined), which identifier-only threading omits by design; the
    identifier-only answers they imply are asserted instead, without reference to the
    script. thread-orderedsubject and thread-orderedsubject2 use ORDEREDSUBJECT, which
    groups by subject only.
"""

from __future__ import annotations

import mailbox
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.conversations import (
    ThreadInput,
    assemble_conversations,
    thread_input_from,
)

from .support import (
    Layout,
    Tree,
    layout_of_conversations,
    layout_of_trees,
    parse_thread_answer,
)

pytestmark = pytest.mark.corpus

SCRIPTS = "threading/imaptest-rfc5256"


@dataclass(frozen=True)
class Check:
    """One THREAD command: the expected answer and the messages present, by sequence."""

    expected: str
    present: tuple[ThreadInput, ...]  # index + 1 is the sequence number


def _received_date(from_line: str) -> datetime:
    # "user@domain  Fri Feb 22 17:06:23 2008" or "... 2008 +0200"
    fields = from_line.split()
    stamp = datetime.strptime(" ".join(fields[1:6]), "%a %b %d %H:%M:%S %Y")
    return stamp.replace(tzinfo=UTC)


def _mailbox_inputs(path: Path) -> list[ThreadInput]:
    box = mailbox.mbox(path, create=False)
    inputs = []
    try:
        for uid, key in enumerate(box.keys(), start=1):
            normalized = normalize_message(box.get_bytes(key))
            received = _received_date(box[key].get_from())
            message = thread_input_from(f"uid{uid:04d}", normalized)
            if message.sent_at is None:
                message = ThreadInput(
                    message.key,
                    message.message_id,
                    message.in_reply_to,
                    message.references,
                    received,
                )
            inputs.append(message)
    finally:
        box.close()
    return inputs


def run_script(directory: Path, name: str) -> list[Check]:
    lines = (directory / name).read_text(encoding="utf-8").splitlines()
    waiting = _mailbox_inputs(directory / f"{name}.mbox")
    present: list[ThreadInput] = []
    deleted: set[int] = set()
    checks: list[Check] = []
    body = iter(lines)
    for line in body:
        if not line.strip():
            break
        if line.strip() == "messages: all":
            present, waiting = waiting, []
    for line in body:
        command = line.strip().lower()
        if command == "ok append":
            present.append(waiting.pop(0))
        elif command.startswith("ok store ") and "\\deleted" in command:
            deleted.update(int(n) for n in command.split()[2].split(","))
        elif command == "ok expunge":
            present = [m for seq, m in enumerate(present, start=1) if seq not in deleted]
            deleted.clear()
        elif command.startswith("ok thread references"):
            answer = next(body).strip()
            assert answer.lower().startswith("* thread")
            checks.append(Check(answer[len("* thread") :], tuple(present)))
    return checks


def expected_layout(check: Check) -> Layout:
    """The expected answer with sequence numbers replaced by the messages' keys."""
    key_of_seq = {str(seq): m.key for seq, m in enumerate(check.present, start=1)}

    def rename(tree: Tree) -> Tree:
        return [rename(item) if isinstance(item, list) else key_of_seq[item] for item in tree]

    return layout_of_trees([rename(t) for t in parse_thread_answer(check.expected)])


def assembled_layout(check: Check) -> Layout:
    return layout_of_conversations(assemble_conversations(check.present))


@pytest.fixture(scope="module")
def scripts(corpora: Path) -> Path:
    return corpora / SCRIPTS


@pytest.mark.parametrize(
    ("script", "answers"),
    [("thread", 2), ("thread5", 3), ("thread6", 1), ("thread8", 3)],
)
def test_every_references_answer_is_reproduced(scripts: Path, script: str, answers: int) -> None:
    checks = run_script(scripts, script)
    assert len(checks) == answers
    for check in checks:
        expected = expected_layout(check)
        ours = assembled_layout(check)
        assert ours.threads == expected.threads, check.expected
        assert ours.parent == expected.parent, check.expected


def test_a_second_copy_keeps_the_parent_of_the_first(scripts: Path) -> None:
    first, after_expunge = run_script(scripts, "thread7")
    expected, ours = expected_layout(first), assembled_layout(first)
    assert ours.parent == expected.parent
    assert sorted(map(sorted, ours.threads)) == sorted(map(sorted, expected.threads))
    # 2 and 4 share a Message-ID: listed together, before 2's reply 3.
    assert ours.threads == [["uid0001", "uid0002", "uid0004", "uid0003"]]

    expected, ours = expected_layout(after_expunge), assembled_layout(after_expunge)
    assert ours.threads == expected.threads
    assert ours.parent == expected.parent


def test_two_copies_of_one_message_form_one_conversation(scripts: Path) -> None:
    (check,) = run_script(scripts, "thread2")
    assert check.expected.strip() == "(1)(2)"  # RFC 5256: the later copy gets a fresh id
    ours = assembled_layout(check)
    assert ours.threads == [["uid0001", "uid0002"]]
    assert ours.parent == {"uid0001": None, "uid0002": None}


@pytest.mark.parametrize("script", ["thread3", "thread4"])
def test_subject_merging_answers_are_not_followed(scripts: Path, script: str) -> None:
    (check,) = run_script(scripts, script)
    assert check.expected.strip() == "(1 2)"  # joined by base subject ("foo", "Re: foo")
    ours = assembled_layout(check)
    if script == "thread3":
        # Same Message-ID: one conversation through the shared node, no reply relation.
        assert ours.threads == [["uid0001", "uid0002"]]
    else:
        # No identifier in common: two conversations.
        assert ours.threads == [["uid0001"], ["uid0002"]]
    assert ours.parent == {"uid0001": None, "uid0002": None}


def test_no_other_script_is_silently_ignored(scripts: Path) -> None:
    names = sorted(p.name for p in scripts.iterdir() if p.is_file() and not p.suffix)
    handled = {"thread", "thread2", "thread3", "thread4", "thread5", "thread6", "thread7"}
    handled |= {"thread8", "thread-orderedsubject", "thread-orderedsubject2"}
    assert set(names) <= handled | {"COPYING", "COPYING.MIT", "README"}
