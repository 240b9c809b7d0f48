"""Conversations over a real list archive agree with Dovecot's THREAD=REFS answer.

The reference is ``threading/linux-mips-2005.dovecot-thread.json`` in the shared corpora:
Dovecot 2.3.19 answering ``UID THREAD REFS`` over the 2,896 messages of
``messages/linux-mips-2005`` (one mailbox, appended in file-name order, so UID order is
file-name order). THREAD=REFS is RFC 5256 section 2.2 REFERENCES steps 1 to 4 without
the subject merging of step 5, which is the rule the assembler implements.

What "parent" means on each side
    Dovecot links placeholder ("dummy") nodes for identifiers that are referenced but not
    stored, then attaches every stored message to its first stored ancestor, or to the
    topmost placeholder when there is none (index-thread-finish.c,
    mail_thread_create_shadows). Non-root placeholders therefore never appear in the
    answer, and a root placeholder appears only as a list that opens with nested lists
    (``((1)(2))``); a root placeholder with a single child is printed exactly like a plain
    root. So the parent Dovecot prints for a message is its nearest stored ancestor, and
    children of a root placeholder have no printed parent: the same thing as
    ``Placement.parent_key``. Every message is therefore compared, not only those whose
    direct parent was stored.

What is compared
    * membership: both sides partition the messages identically;
    * parents: every message has the same parent (None for roots and for the children of
      a root placeholder);
    * sibling order: Dovecot orders the children of a node by sent date (falling back to
      the received date), then UID; the assembler by sent time, then key. Keys here are
      the file names, so ties break the same way; every message of the archive has a
      readable Date. The order of the threads themselves is not compared: REFS sorts
      threads by their newest message, the assembler lists them by their first root.

Deliberate differences
    The assembler departs from Dovecot for duplicate Message-IDs (shared node instead of a
    fresh identifier for the later copy), for a message naming itself in its References,
    and where Dovecot's one-message-at-a-time linking depends on arrival order (a message
    naming no parent that arrives after a reply whose References place it; see
    `mailfathom.domain.conversations`, "Linking"). None of these changes a result in this
    archive, so the allow-list below is empty; any entry added to it must name the message
    and the reason.

A References header naming one identifier twice does not occur in this archive; that case
is compared with a running Dovecot in ``test_repeated_references``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mailfathom.domain.conversations import ThreadInput, assemble_conversations

from .support import (
    Layout,
    claimed_parent,
    layout_of_conversations,
    layout_of_trees,
    thread_input_of_file,
)

pytestmark = pytest.mark.corpus

ARCHIVE = "messages/linux-mips-2005"
ANSWER = "threading/linux-mips-2005.dovecot-thread.json"

# Messages allowed to differ from Dovecot, with the reason. Empty: the archive holds no
# duplicate Message-ID and no self reference (checked below).
ALLOWED_DIFFERENCES: dict[str, str] = {}


@pytest.fixture(scope="module")
def archive(corpora: Path) -> tuple[list[ThreadInput], Layout, Layout]:
    answer = json.loads((corpora / ANSWER).read_text(encoding="utf-8"))
    dovecot = layout_of_trees(answer["REFS"])
    inputs = [
        thread_input_of_file(path.name, path)
        for path in sorted((corpora / ARCHIVE).iterdir())
        if path.suffix == ".eml"
    ]
    ours = layout_of_conversations(assemble_conversations(inputs))
    return inputs, dovecot, ours


def test_the_reference_covers_the_whole_archive(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    inputs, dovecot, ours = archive
    assert len(inputs) == 2896
    assert set(dovecot.parent) == {m.key for m in inputs} == set(ours.parent)


def test_the_archive_needs_no_deliberate_difference(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    inputs, _, _ = archive
    ids = [m.message_id for m in inputs if m.message_id]
    assert len(ids) == len(set(ids)) == len(inputs), "no duplicate or missing Message-ID"
    assert not [m.key for m in inputs if m.message_id in m.references + m.in_reply_to]


def test_membership_agrees_with_dovecot_refs(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    _, dovecot, ours = archive
    disagreeing = sorted(
        key
        for key in dovecot.parent
        if dovecot.members(key) != ours.members(key) and key not in ALLOWED_DIFFERENCES
    )
    assert disagreeing == []
    assert len(ours.threads) == len(dovecot.threads) == 956


def test_every_parent_agrees_with_dovecot_refs(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    _, dovecot, ours = archive
    disagreeing = {
        key: (dovecot.parent[key], ours.parent[key])
        for key in sorted(dovecot.parent)
        if dovecot.parent[key] != ours.parent[key] and key not in ALLOWED_DIFFERENCES
    }
    assert disagreeing == {}
    replies = sum(1 for parent in ours.parent.values() if parent is not None)
    assert replies == sum(1 for parent in dovecot.parent.values() if parent is not None)


def test_the_comparison_exercises_placeholders(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    """Replies to unstored messages and placeholder-rooted threads are part of the archive.

    Of the 2,009 messages naming a parent, 1,919 name a stored one; the other 90 answer a
    message missing from the archive, and 18 of those still sit under a stored ancestor
    found through their References. Two threads have a placeholder root.
    """
    inputs, dovecot, ours = archive
    key_of_id = {m.message_id: m.key for m in inputs}
    claimed = {m.key: claimed_parent(m) for m in inputs}
    naming = [key for key, parent in claimed.items() if parent is not None]
    missing = [key for key in naming if claimed[key] not in key_of_id]
    through_ancestor = [key for key in missing if ours.parent[key] is not None]
    assert (len(naming), len(missing), len(through_ancestor)) == (2009, 90, 18)
    assert all(ours.parent[k] == dovecot.parent[k] for k in through_ancestor)
    assert all(ours.parent[k] == key_of_id[claimed[k]] for k in naming if k not in missing)
    placeholder_rooted = [t for t in ours.threads if sum(ours.parent[k] is None for k in t) > 1]
    assert len(placeholder_rooted) == 2


def test_sibling_order_agrees_with_dovecot_refs(
    archive: tuple[list[ThreadInput], Layout, Layout],
) -> None:
    _, dovecot, ours = archive
    theirs = {k: v for k, v in dovecot.children().items() if k is not None}
    mine = {k: v for k, v in ours.children().items() if k is not None}
    assert mine == theirs
