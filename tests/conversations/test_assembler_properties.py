"""The conversation assembler: RFC 5256 rules, the documented choices, and invariants.

Invariants checked on generated input (small identifier pools, so that duplicates,
dangling references and reference loops are frequent):

* the result does not depend on the order the messages are given in;
* every message appears exactly once, and no conversation is empty;
* a parent comes before its replies, in the same conversation, one level up (which
  also rules out parent cycles);
* a message whose claimed parent is stored sits under it, in the same conversation
  (or above it, when the link was refused because it would close a loop);
* all copies of one Message-ID are listed together with the same parent and depth;
* assembling each set of messages connected through their identifiers on its own gives
  the same conversations as assembling everything at once.
"""

from __future__ import annotations

import random
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mailfathom.domain.conversations import (
    Conversation,
    Placement,
    ThreadInput,
    assemble_conversations,
    connected_identifiers,
)

from .support import check_invariants, claimed_parent, layout_of_conversations

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def msg(
    key: str,
    message_id: str | None = None,
    *,
    refs: tuple[str, ...] = (),
    irt: tuple[str, ...] = (),
    minute: int | None = 0,
) -> ThreadInput:
    sent = None if minute is None else T0 + timedelta(minutes=minute)
    return ThreadInput(key, message_id, irt, refs, sent)


def shape(conversations: list[Conversation]) -> list[list[tuple[str, str | None, int]]]:
    return [[(p.key, p.parent_key, p.depth) for p in c.members] for c in conversations]


# RFC 5256 section 2.2 rules


def test_the_last_reference_is_the_parent_and_in_reply_to_is_then_ignored() -> None:
    result = assemble_conversations(
        [
            msg("a", "a@x"),
            msg("b", "b@x", minute=1),
            msg("c", "c@x", refs=("a@x", "b@x"), irt=("a@x",), minute=2),
        ]
    )
    assert shape(result) == [[("a", None, 0), ("b", "a", 1), ("c", "b", 2)]]


def test_in_reply_to_is_the_parent_when_references_names_nothing() -> None:
    result = assemble_conversations(
        [msg("a", "a@x"), msg("b", "b@x", irt=("a@x", "zzz@x"), minute=1)]
    )
    assert shape(result) == [[("a", None, 0), ("b", "a", 1)]]


def test_unstored_ancestors_are_skipped() -> None:
    result = assemble_conversations(
        [msg("a", "a@x"), msg("c", "c@x", refs=("a@x", "gone1@x", "gone2@x"), minute=1)]
    )
    assert shape(result) == [[("a", None, 0), ("c", "a", 1)]]


def test_replies_to_one_missing_message_form_one_conversation_with_several_roots() -> None:
    result = assemble_conversations(
        [
            msg("r2", "r2@x", refs=("missing@x",), minute=5),
            msg("r1", "r1@x", refs=("missing@x",), minute=1),
            msg("r3", "r3@x", refs=("missing@x", "r1@x"), minute=7),
        ]
    )
    assert shape(result) == [[("r1", None, 0), ("r3", "r1", 1), ("r2", None, 0)]]
    assert [p.key for p in result[0].roots] == ["r1", "r2"]


def test_a_single_reply_to_a_missing_message_is_a_plain_root() -> None:
    result = assemble_conversations([msg("r", "r@x", refs=("missing@x", "gone@x"))])
    assert shape(result) == [[("r", None, 0)]]


def test_messages_without_identifier_stand_alone_unless_they_reply() -> None:
    result = assemble_conversations(
        [
            msg("a", "a@x"),
            msg("n1", None, minute=1),
            msg("n2", None, minute=2),
            msg("n3", None, irt=("a@x",), minute=3),
        ]
    )
    assert shape(result) == [[("a", None, 0), ("n3", "a", 1)], [("n1", None, 0)], [("n2", None, 0)]]


def test_a_message_places_itself_even_against_other_messages_references() -> None:
    # c's References claim a > b, but b names x as its parent: b's own claim wins
    # (step 1.B), whatever order the three are read in.
    inputs = [
        msg("a", "a@x"),
        msg("x", "x@x", minute=1),
        msg("b", "b@x", refs=("x@x",), minute=2),
        msg("c", "c@x", refs=("a@x", "b@x"), minute=3),
    ]
    result = assemble_conversations(inputs)
    assert shape(result) == [[("a", None, 0)], [("x", None, 0), ("b", "x", 1), ("c", "b", 2)]]


def test_a_message_naming_no_parent_takes_the_one_other_references_give_it() -> None:
    # b names no parent; c's References say a > b. Evidence fills what no message claimed,
    # whether b is sent before or after c (literal RFC 5256 processing would drop the link
    # when b is read last).
    for b_minute in (1, 3):
        inputs = [
            msg("a", "a@x"),
            msg("b", "b@x", minute=b_minute),
            msg("c", "c@x", refs=("a@x", "b@x"), minute=2),
        ]
        assert shape(assemble_conversations(inputs)) == [
            [("a", None, 0), ("b", "a", 1), ("c", "b", 2)]
        ]


def test_a_claimed_parent_is_never_undone_by_references_chains() -> None:
    # b's claim (x) stands; the chains of c and d, read before and after, cannot move it.
    inputs = [
        msg("c", "c@x", refs=("a@x", "b@x"), minute=0),
        msg("a", "a@x", minute=1),
        msg("x", "x@x", minute=1),
        msg("b", "b@x", refs=("x@x",), minute=2),
        msg("d", "d@x", refs=("a@x", "b@x", "c@x"), minute=3),
    ]
    assert shape(assemble_conversations(inputs)) == [
        [("a", None, 0)],
        [("x", None, 0), ("b", "x", 1), ("c", "b", 2), ("d", "c", 3)],
    ]


def test_a_reference_loop_is_broken_by_refusing_the_closing_link() -> None:
    result = assemble_conversations(
        [msg("p", "p@x", irt=("q@x",), minute=0), msg("q", "q@x", irt=("p@x",), minute=1)]
    )
    assert shape(result) == [[("q", None, 0), ("p", "q", 1)]]


def test_a_loop_inside_one_references_header_is_ignored() -> None:
    result = assemble_conversations(
        [
            msg("a", "a@x"),
            msg("b", "b@x", minute=1),
            msg("c", "c@x", refs=("a@x", "b@x", "a@x"), minute=2),
        ]
    )
    assert shape(result) == [[("a", None, 0), ("b", "a", 1), ("c", "a", 1)]]


# Order


def test_siblings_follow_sent_time_then_key_and_undated_messages_come_last() -> None:
    inputs = [
        msg("root", "r@x", minute=0),
        msg("k3", "3@x", irt=("r@x",), minute=None),
        msg("k2", "2@x", irt=("r@x",), minute=9),
        msg("k1", "1@x", irt=("r@x",), minute=9),
        msg("k0", "0@x", irt=("r@x",), minute=20),
        msg("k4", "4@x", irt=("r@x",), minute=None),
        msg("k5", "5@x", irt=("r@x",), minute=3),
    ]
    (conversation,) = assemble_conversations(inputs)
    assert conversation.keys == ("root", "k5", "k1", "k2", "k0", "k3", "k4")
    assert [p.position for p in conversation.members] == list(range(7))


def test_replies_follow_their_parent_depth_first() -> None:
    inputs = [
        msg("a", "a@x", minute=0),
        msg("b", "b@x", refs=("a@x",), minute=1),
        msg("c", "c@x", refs=("a@x",), minute=2),
        msg("b1", "b1@x", refs=("a@x", "b@x"), minute=3),
        msg("b2", "b2@x", refs=("a@x", "b@x", "b1@x"), minute=4),
    ]
    (conversation,) = assemble_conversations(inputs)
    assert conversation.keys == ("a", "b", "b1", "b2", "c")


def test_conversations_come_in_order_of_their_first_message() -> None:
    result = assemble_conversations(
        [
            msg("late", "l@x", minute=50),
            msg("early", "e@x", minute=1),
            msg("none", None, minute=None),
        ]
    )
    assert [c.keys for c in result] == [("early",), ("late",), ("none",)]


def test_a_naive_sent_time_counts_as_utc() -> None:
    naive = ThreadInput("n", "n@x", (), (), datetime(2024, 3, 1, 12, 30))
    aware = msg("a", "a@x", minute=20)  # 12:20 UTC
    assert [c.keys for c in assemble_conversations([naive, aware])] == [("a",), ("n",)]


# Duplicate Message-IDs


def test_copies_of_one_message_share_its_place_and_its_replies() -> None:
    inputs = [
        msg("root", "r@x", minute=0),
        msg("copy-b", "m@x", refs=("r@x",), minute=5),
        msg("copy-a", "m@x", refs=("r@x",), minute=5),
        msg("reply", "re@x", refs=("r@x", "m@x"), minute=9),
    ]
    assert shape(assemble_conversations(inputs)) == [
        [("root", None, 0), ("copy-a", "root", 1), ("copy-b", "root", 1), ("reply", "copy-a", 2)]
    ]


def test_copies_without_references_are_roots_of_one_conversation() -> None:
    result = assemble_conversations([msg("k2", "m@x"), msg("k1", "m@x")])
    assert shape(result) == [[("k1", None, 0), ("k2", None, 0)]]


def test_the_first_copy_places_the_shared_node() -> None:
    inputs = [
        msg("p", "p@x", minute=0),
        msg("q", "q@x", minute=0),
        msg("first", "m@x", refs=("p@x",), minute=1),
        msg("second", "m@x", refs=("q@x",), minute=2),
    ]
    assert shape(assemble_conversations(inputs)) == [
        [("p", None, 0), ("first", "p", 1), ("second", "p", 1)],
        [("q", None, 0)],
    ]


def test_a_later_copy_places_the_node_when_the_first_names_no_parent() -> None:
    inputs = [
        msg("p", "p@x"),
        msg("first", "m@x", minute=1),
        msg("second", "m@x", refs=("p@x",), minute=2),
    ]
    assert shape(assemble_conversations(inputs)) == [
        [("p", None, 0), ("first", "p", 1), ("second", "p", 1)]
    ]


def test_keys_must_be_distinct() -> None:
    with pytest.raises(ValueError, match="distinct key"):
        assemble_conversations([msg("k", "a@x"), msg("k", "b@x")])


def test_nothing_in_nothing_out() -> None:
    assert assemble_conversations([]) == []


# Scale


def test_a_chain_of_ten_thousand_replies_needs_no_recursion() -> None:
    depth = max(10_000, sys.getrecursionlimit() * 5)
    inputs = [
        msg(f"k{i:06d}", f"c{i}@x", irt=(f"c{i - 1}@x",) if i else (), minute=i)
        for i in range(depth)
    ]
    random.Random(7).shuffle(inputs)
    (conversation,) = assemble_conversations(inputs)
    assert conversation.members[-1].depth == depth - 1
    assert conversation.keys == tuple(f"k{i:06d}" for i in range(depth))


def synthetic_mailbox(count: int, seed: int = 1) -> list[ThreadInput]:
    """List traffic: a fifth start a conversation, the rest answer a recent one.

    Replies carry References truncated to 12 entries, some name a missing message, some
    have only In-Reply-To, a few have no Message-ID or no date; keys are UUID-like.
    """
    rnd = random.Random(seed)
    threads: list[list[str]] = []
    ancestry: dict[str, tuple[str, ...]] = {}
    inputs = []
    for i in range(count):
        message_id = f"{i}.{rnd.getrandbits(32):x}@example.org"
        if threads and rnd.random() < 0.8:
            thread = rnd.choice(threads[-2000:])
            parent = rnd.choice(thread)
            refs = (ancestry[parent] + (parent,))[-12:]
            if rnd.random() < 0.05:
                refs = (*refs[:-1], f"missing{i}@example.org")
            thread.append(message_id)
        else:
            refs = ()
            threads.append([message_id])
        ancestry[message_id] = refs
        inputs.append(
            ThreadInput(
                key=f"{rnd.getrandbits(128):032x}",
                message_id=message_id if rnd.random() > 0.01 else None,
                in_reply_to=refs[-1:],
                references=refs if rnd.random() > 0.1 else (),
                sent_at=T0 + timedelta(seconds=37 * i + rnd.randint(0, 3000))
                if rnd.random() > 0.02
                else None,
            )
        )
    rnd.shuffle(inputs)
    return inputs


def test_a_hundred_thousand_messages_are_each_placed_once() -> None:
    # How long this takes is measured by bench/assemble_conversations.py, not asserted here.
    inputs = synthetic_mailbox(100_000)
    conversations = assemble_conversations(inputs)
    placed = [p.key for c in conversations for p in c.members]
    assert len(placed) == 100_000
    assert set(placed) == {i.key for i in inputs}


# Invariants on generated input

POOL = [f"i{n}@x" for n in range(8)]
TIMES = [None, T0, T0 + timedelta(hours=1), T0 + timedelta(hours=2)]


@st.composite
def mailboxes(draw: st.DrawFn) -> list[ThreadInput]:
    count = draw(st.integers(min_value=0, max_value=24))
    ids = st.sampled_from(POOL)
    return [
        ThreadInput(
            key=f"k{index:02d}",
            message_id=draw(st.one_of(st.none(), ids)),
            in_reply_to=tuple(draw(st.lists(ids, max_size=2))),
            references=tuple(draw(st.lists(ids, max_size=4))),
            sent_at=draw(st.sampled_from(TIMES)),
        )
        for index in range(count)
    ]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), inputs=mailboxes())
def test_the_result_depends_only_on_the_set_of_messages(
    data: st.DataObject, inputs: list[ThreadInput]
) -> None:
    expected = assemble_conversations(inputs)
    permuted = data.draw(st.permutations(inputs))
    assert assemble_conversations(permuted) == expected


@settings(max_examples=200, deadline=None)
@given(inputs=mailboxes())
def test_structure_invariants_hold(inputs: list[ThreadInput]) -> None:
    conversations = assemble_conversations(inputs)
    check_invariants(inputs, conversations)


@settings(max_examples=200, deadline=None)
@given(inputs=mailboxes())
def test_copies_of_one_identifier_are_listed_together(inputs: list[ThreadInput]) -> None:
    conversations = assemble_conversations(inputs)
    id_of = {m.key: m.message_id for m in inputs}
    seen_in: dict[str, int] = {}
    for number, conversation in enumerate(conversations):
        runs: dict[str, list[Placement]] = defaultdict(list)
        for placement in conversation.members:
            identifier = id_of[placement.key]
            if identifier is not None:
                runs[identifier].append(placement)
        for identifier, copies in runs.items():
            assert seen_in.setdefault(identifier, number) == number, "one conversation"
            positions = [p.position for p in copies]
            assert positions == list(range(positions[0], positions[0] + len(copies)))
            assert len({(p.parent_key, p.depth) for p in copies}) == 1


@settings(max_examples=200, deadline=None)
@given(inputs=mailboxes())
def test_a_reply_sits_under_its_stored_parent(inputs: list[ThreadInput]) -> None:
    layout = layout_of_conversations(assemble_conversations(inputs))
    id_of = {m.key: m.message_id for m in inputs}
    # The first copy of each identifier in reading order holds the node.
    holder: dict[str, str] = {}
    for thread in layout.threads:
        for key in thread:
            identifier = id_of[key]
            if identifier is not None:
                holder.setdefault(identifier, key)

    def ancestors(key: str) -> set[str]:
        found = set()
        parent = layout.parent[key]
        while parent is not None:
            found.add(parent)
            parent = layout.parent[parent]
        return found

    for m in inputs:
        named = claimed_parent(m)
        if named is None or named not in holder:
            continue  # names no parent, or an unstored one
        if m.message_id is not None and holder[m.message_id] != m.key:
            continue  # a later copy: its node is placed by the first copy
        parent = holder[named]
        assert layout.thread_of[parent] == layout.thread_of[m.key]
        # Under the named parent, or above it when that link would have closed a loop.
        assert layout.parent[m.key] == parent or m.key in ancestors(parent)


@settings(max_examples=200, deadline=None)
@given(inputs=mailboxes())
def test_each_connected_part_assembles_as_in_the_whole(inputs: list[ThreadInput]) -> None:
    # Group messages that share any identifier they name (union-find over identifiers).
    parent: dict[str, str] = {}

    def find(item: str) -> str:
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for m in inputs:
        names = [f"key:{m.key}", *connected_identifiers(m)]
        for name in names[1:]:
            parent[find(name)] = find(names[0])
    parts: dict[str, list[ThreadInput]] = defaultdict(list)
    for m in inputs:
        parts[find(f"key:{m.key}")].append(m)

    whole = {c.keys: c for c in assemble_conversations(inputs)}
    pieces = {c.keys: c for part in parts.values() for c in assemble_conversations(part)}
    assert pieces == whole
