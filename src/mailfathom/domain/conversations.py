"""Conversations: which stored messages answer which, and in what order they are read.

A conversation is assembled from message identifiers only: Message-ID, In-Reply-To and
References (RFC 5322 section 3.6.4). Subject lines, addresses and dates never join or split
conversations; dates only order replies that answer the same message. This is the REFERENCES
algorithm of RFC 5256 section 2.2, steps 1 to 4, without the subject-merging step 5 (the
behaviour IMAP servers publish as THREAD=REFS).

Linking (RFC 5256 section 2.2 step 1)
    Every identifier is one node; identifiers that are named but not stored become
    placeholder ("dummy") nodes. A message's references are its References identifiers
    in the order written, repeats included (the last one names the parent even when it
    repeats an earlier one), or the first In-Reply-To identifier when References names none
    (see `identifiers.normalize_references`). Linking runs in two passes over the messages in
    canonical order (sent time, then key, see Order), so the result depends only on the
    set of messages, never on the order the caller supplies them in:

    1. Claims (step 1.B): a message's node takes the node of its last reference as
       parent, unless that would close a loop.
    2. Evidence (step 1.A): along each References header, each identifier becomes the
       parent of the next, but only for a node that has no parent yet and whose own
       message made no claim (placeholders, and messages naming no reference), and
       never closing a loop. Between conflicting References chains the first in
       canonical order wins.

    RFC 5256 processes one message at a time, so there a message naming no reference
    keeps or loses the parent other messages' References gave it depending on which was
    read first, and a later link can cut a reply off from the message it names. With
    claims applied first, a message whose named parent is stored always sits under it (or
    above it, when the link would have closed a loop), and evidence only fills what no
    message claimed. For mail read in sent order the two agree: on a real list archive of
    2,896 messages the result equals Dovecot's THREAD=REFS answer for every message
    (tests/conversations/test_dovecot_refs_agreement.py).

Pruning (steps 2 to 4)
    Placeholders are dropped from the result. A stored message's parent is its nearest
    stored ancestor. A placeholder at the top with one stored descendant line simply
    disappears; a placeholder at the top holding several lines keeps them in ONE
    conversation with several roots (the "ghost root": the message everybody answered was
    never received). A placeholder with nothing stored below it vanishes.

Duplicate identifiers (deliberate difference from RFC 5256)
    RFC 5256 gives every later message with an already-seen Message-ID a fresh identifier,
    which splits a message stored twice (two folders, or a copy in Sent) away from the
    replies that answer it. Here all stored messages claiming one identifier share its
    node: they are listed together, first copy first (canonical order), at the same depth
    and with the same parent, and replies to the identifier hang under the first copy.
    The first copy's references make the node's claim (pass 1); the other copies'
    references count as evidence (pass 2), so they place the node only when the first
    copy names no parent. Consequently every copy of an identifier is in one conversation,
    and a later copy that names a different parent than the first is not placed under it.
    No copy is ever dropped.

Self references (deliberate difference)
    A message's own identifier inside its In-Reply-To or References is ignored; RFC 5256
    taken literally would make such a message a root, cut off from what it answers.

Order
    Depth first, every node before its replies. Siblings (and several roots of one
    conversation) in order of sent time; messages without a usable sent time after all
    dated ones; ties broken by the key, so the order is total and stable across reads.
    Conversations come in the order of their first root.

Result for a part of a mailbox
    Links only ever join identifiers one message names together, so a set of messages that
    is closed under "names an identifier also named by" (see `connected_identifiers`) is
    assembled exactly as it would be inside the whole mailbox.

Everything is iterative; reply chains of any depth are fine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from mailfathom.domain.identifiers import connected_identifier_set, normalize_references
from mailfathom.domain.message import NormalizedMessage

__all__ = [
    "Conversation",
    "Placement",
    "ThreadInput",
    "assemble_conversations",
    "connected_identifiers",
    "thread_input_from",
]

_NONE = -1


@dataclass(frozen=True, slots=True)
class ThreadInput:
    """What the assembler needs to know about one stored email.

    `key` is the stored email's local identity: unique among the inputs, and the final
    tie-breaker of every ordering. Identifiers are given without angle brackets.
    `sent_at` should be timezone-aware; a naive value is read as UTC.
    """

    key: str
    message_id: str | None
    in_reply_to: tuple[str, ...]
    references: tuple[str, ...]
    sent_at: datetime | None


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one stored email sits in its conversation.

    `parent_key` is the nearest stored ancestor (placeholders skipped), None for a root.
    `position` is the zero-based place in reading order, `depth` the number of stored
    ancestors.
    """

    key: str
    parent_key: str | None
    position: int
    depth: int


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation, its members in reading order (position 0 to n - 1)."""

    members: tuple[Placement, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(p.key for p in self.members)

    @property
    def roots(self) -> tuple[Placement, ...]:
        """Members without a stored parent; more than one means the first message is missing."""
        return tuple(p for p in self.members if p.parent_key is None)


def thread_input_from(key: str, message: NormalizedMessage) -> ThreadInput:
    """The assembler's view of a normalized message stored under `key`."""
    return ThreadInput(
        key=key,
        message_id=message.message_id,
        in_reply_to=message.in_reply_to,
        references=message.references,
        sent_at=message.sent_at,
    )


def connected_identifiers(msg: ThreadInput) -> tuple[str, ...]:
    """Every identifier the message touches: its own, References and In-Reply-To.

    A newly stored message can only join, or join together, conversations whose messages
    name one of these identifiers; the set is wider than what linking uses, so looking
    these up never misses a candidate. Re-assembling a set of messages reproduces their
    whole-mailbox result when the set is closed under sharing these identifiers (every
    message naming an identifier that a member names is a member too). The members of
    the touched conversations are not always such a set: a conversation can leave out a
    message that names one of its identifiers (an In-Reply-To set aside because References
    is present, say), and that message's References still count as evidence.
    """
    return connected_identifier_set(msg.message_id, msg.in_reply_to, msg.references)


def _order_key(msg: ThreadInput) -> tuple[int, float, str]:
    sent = msg.sent_at
    if sent is None:
        return (1, 0.0, msg.key)
    if sent.tzinfo is None:
        sent = sent.replace(tzinfo=UTC)
    # A float keeps microseconds apart between the years 1834 and 2106; outside that range
    # two sent times less than a few microseconds apart may tie, and the key decides.
    return (0, sent.timestamp(), msg.key)


class _Links:
    """Parent links between nodes, numbered 0..total-1; -1 stands for "no parent"."""

    __slots__ = ("child_count", "claimed", "parent")

    def __init__(self, total: int) -> None:
        self.parent = [_NONE] * total
        self.child_count = [0] * total
        self.claimed = bytearray(total)

    def _closes_loop(self, parent: int, child: int) -> bool:
        """Whether making `parent` the parent of `child` would close a loop."""
        if self.child_count[child] == 0:
            return parent == child
        up = self.parent
        node = parent
        while node != _NONE:
            if node == child:
                return True
            node = up[node]
        return False

    def claim(self, child: int, parent: int) -> None:
        """RFC 5256 step 1.B: the node's own message names its parent."""
        self.claimed[child] = 1
        if not self._closes_loop(parent, child):
            self.parent[child] = parent
            self.child_count[parent] += 1

    def link(self, parent: int, child: int) -> None:
        """RFC 5256 step 1.A: give a parent to a node nobody placed, never closing a loop."""
        if (
            self.parent[child] != _NONE
            or self.claimed[child]
            or parent == child
            or self._closes_loop(parent, child)
        ):
            return
        self.parent[child] = parent
        self.child_count[parent] += 1


def assemble_conversations(messages: Iterable[ThreadInput]) -> list[Conversation]:
    """Group messages into conversations and order each one (see the module documentation).

    Every input appears in exactly one conversation. Raises ValueError when two inputs
    share a key, since the key is what identifies a stored email in the result.
    """
    ordered = sorted(messages, key=_order_key)
    count = len(ordered)
    if len({m.key for m in ordered}) != count:
        raise ValueError("every message given to the assembler needs a distinct key")

    # Stored nodes are numbered in canonical order of their first message, placeholders
    # after them.
    node_by_id: dict[str, int] = {}
    node_of = [0] * count
    first: list[int] = []
    copies: dict[int, list[int]] = {}
    for index, msg in enumerate(ordered):
        identifier = msg.message_id
        node = node_by_id.get(identifier) if identifier else None
        if node is None:
            node = len(first)
            first.append(index)
            if identifier:
                node_by_id[identifier] = node
        else:
            copies.setdefault(node, []).append(index)
        node_of[index] = node
    stored = len(first)

    total = stored
    ref_nodes: list[list[int]] = []
    for msg in ordered:
        nodes = []
        for identifier in normalize_references(msg.references, msg.in_reply_to, msg.message_id):
            node = node_by_id.get(identifier)
            if node is None:
                node = node_by_id[identifier] = total
                total += 1
            nodes.append(node)
        ref_nodes.append(nodes)

    links = _Links(total)
    # Pass 1: each node whose first message names a parent takes it.
    for node in range(stored):
        refs = ref_nodes[first[node]]
        if refs:
            links.claim(node, refs[-1])
    # Pass 2: References chains, and the parents later copies name, fill what is left.
    for index, refs in enumerate(ref_nodes):
        for position in range(1, len(refs)):
            links.link(refs[position - 1], refs[position])
        node = node_of[index]
        if refs and first[node] != index:
            links.link(refs[-1], node)

    return _conversations(ordered, links.parent, stored, first, copies)


def _conversations(
    ordered: list[ThreadInput],
    parent: list[int],
    stored: int,
    first: list[int],
    copies: dict[int, list[int]],
) -> list[Conversation]:
    """Steps 2 to 4: drop placeholders, group by tree, order depth first."""
    # For placeholders: nearest stored ancestor (or _NONE) and topmost node, memoized.
    anchor = [-2] * len(parent)
    top = [-2] * len(parent)
    path: list[int] = []
    children: dict[int, list[int]] = {}
    roots_by_top: dict[int, list[int]] = {}
    # Stored nodes in canonical order, so every child list and root list comes out sorted.
    for node in range(stored):
        up = parent[node]
        if up == _NONE:
            roots_by_top[node] = [node]
            continue
        if up < stored:
            children.setdefault(up, []).append(node)
            continue
        if anchor[up] == -2:
            walk = up
            while walk >= stored and anchor[walk] == -2:
                path.append(walk)
                walk = parent[walk]
            if walk == _NONE:
                found_anchor, found_top = _NONE, path[-1]
            elif walk < stored:
                found_anchor, found_top = walk, _NONE
            else:
                found_anchor, found_top = anchor[walk], top[walk]
            for placeholder in path:
                anchor[placeholder] = found_anchor
                top[placeholder] = found_top
            path.clear()
        if anchor[up] == _NONE:
            roots_by_top.setdefault(top[up], []).append(node)
        else:
            children.setdefault(anchor[up], []).append(node)

    result: list[Conversation] = []
    for roots in roots_by_top.values():
        placements: list[Placement] = []
        stack: list[tuple[int, str | None, int]] = [(n, None, 0) for n in reversed(roots)]
        while stack:
            node, parent_key, depth = stack.pop()
            own_key = ordered[first[node]].key
            placements.append(Placement(own_key, parent_key, len(placements), depth))
            for index in copies.get(node, ()):
                key = ordered[index].key
                placements.append(Placement(key, parent_key, len(placements), depth))
            below = children.get(node)
            if below:
                stack.extend((child, own_key, depth + 1) for child in reversed(below))
        result.append(Conversation(tuple(placements)))
    return result
