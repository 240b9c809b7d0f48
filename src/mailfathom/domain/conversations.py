"""Conversations: which stored messages answer which, and in what order they are read.

A conversation is assembled from message identifiers only: Message-ID, In-Reply-To and
References (RFC 5322 section 3.6.4). Subject lines, addresses and dates never join or split
conversations; dates only order replies that answer the same message. This is the REFERENCES
algorithm of RFC 5256 section 2.2, steps 1 to 4, without the subject-merging step 5 (the
behaviour IMAP servers publish as THREAD=REFS).

Linking (RFC 5256 section 2.2 step 1)
    Messages are visited in a canonical order (sent time, then the stored email's key, see
    below), so the result never depends on the order the caller supplies them in. For each
    message, its references (References, or the first In-Reply-To identifier when
    References names none, see `identifiers.normalize_references`) are linked pairwise,
    each one the parent of the next, but only where the younger one has no parent yet and
    the link would not close a loop (step 1.A). The message's own node then takes its last
    reference as parent, replacing any parent that another message's References gave it,
    or no parent when it names no reference; again never closing a loop (step 1.B).
    Identifiers named but not stored become placeholder ("dummy") nodes.

Pruning (steps 2 to 4)
    Placeholders are dropped from the result. A stored message's parent is its nearest
    stored ancestor. A placeholder at the top with one stored descendant line simply
    disappears; a placeholder at the top holding several lines keeps them in ONE
    conversation with several roots (the "ghost root": the message everybody answered was
    never received). A placeholder with nothing stored below it vanishes.

Duplicate identifiers (deliberate difference from RFC 5256)
    RFC 5256 gives every later message with an already-seen Message-ID a fresh identifier,
    which splits a message stored twice (two folders, or a copy in Sent) away from the
    replies that answer it. Here all stored messages claiming one identifier share its node:
    they are listed together, in canonical order, at the same depth and with the same
    parent, and replies to the identifier hang under the first of them (the
    "representative"). The representative's references place the node (step 1.B); the
    other claimants' references count as ordinary reference links (step 1.A), so they can
    place the node only when the representative did not.

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
from datetime import UTC, datetime, timedelta

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

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
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

    A newly stored message can only join conversations holding one of these identifiers;
    the set is wider than what linking uses, so looking these up never misses a candidate.
    """
    return connected_identifier_set(msg.message_id, msg.in_reply_to, msg.references)


def _order_key(msg: ThreadInput) -> tuple[int, int, str]:
    sent = msg.sent_at
    if sent is None:
        return (1, 0, msg.key)
    if sent.tzinfo is None:
        sent = sent.replace(tzinfo=UTC)
    return (0, (sent - _EPOCH) // _MICROSECOND, msg.key)


class _Forest:
    """Nodes (one per identifier, or per message without one) and their parent links."""

    __slots__ = ("by_id", "child_count", "claimed", "members", "parent")

    def __init__(self) -> None:
        self.by_id: dict[str, int] = {}
        self.parent: list[int] = []
        self.child_count: list[int] = []
        self.members: list[list[int]] = []
        self.claimed: list[bool] = []

    def new_node(self) -> int:
        self.parent.append(_NONE)
        self.child_count.append(0)
        self.members.append([])
        self.claimed.append(False)
        return len(self.parent) - 1

    def node_for(self, identifier: str) -> int:
        node = self.by_id.get(identifier)
        if node is None:
            node = self.new_node()
            self.by_id[identifier] = node
        return node

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
        self.claimed[child] = True
        if not self._closes_loop(parent, child):
            self.parent[child] = parent
            self.child_count[parent] += 1

    def link(self, parent: int, child: int) -> None:
        """RFC 5256 step 1.A: fill a parent nobody claimed, never closing a loop."""
        if (
            parent == child
            or self.parent[child] != _NONE
            or self.claimed[child]
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

    forest = _Forest()
    node_for = forest.node_for
    node_of = [0] * count
    for index, msg in enumerate(ordered):
        node = node_for(msg.message_id) if msg.message_id else forest.new_node()
        node_of[index] = node
        forest.members[node].append(index)

    ref_nodes = [
        [node_for(r) for r in normalize_references(m.references, m.in_reply_to, m.message_id)]
        for m in ordered
    ]

    # Pass 1: every node whose first message names a parent takes it.
    members = forest.members
    for index, refs in enumerate(ref_nodes):
        node = node_of[index]
        if refs and members[node][0] == index:
            forest.claim(node, refs[-1])

    # Pass 2: the rest of the References chains, and later copies' parents, fill the gaps.
    for index, refs in enumerate(ref_nodes):
        for parent, child in zip(refs, refs[1:]):
            forest.link(parent, child)
        node = node_of[index]
        if refs and members[node][0] != index:
            forest.link(refs[-1], node)

    return _conversations(ordered, forest, node_of)


def _conversations(
    ordered: list[ThreadInput], forest: _Forest, node_of: list[int]
) -> list[Conversation]:
    parent = forest.parent
    members = forest.members
    node_total = len(parent)

    # Nearest stored node at or above each node (_NONE when only placeholders remain) and
    # the topmost node, filled iteratively with the walked path remembered.
    stored_at_or_above = [-2] * node_total
    top = [-2] * node_total
    path: list[int] = []
    for start in range(node_total):
        node = start
        while node != _NONE and stored_at_or_above[node] == -2:
            path.append(node)
            node = parent[node]
        above_stored = _NONE if node == _NONE else stored_at_or_above[node]
        above_top = path[-1] if node == _NONE else top[node]
        while path:
            node = path.pop()
            if members[node]:
                above_stored = node
            stored_at_or_above[node] = above_stored
            top[node] = above_top

    # Stored nodes in canonical order of their representatives; appending in that order
    # keeps every child list and root list sorted.
    children: dict[int, list[int]] = {}
    roots_by_top: dict[int, list[int]] = {}
    for index, node in enumerate(node_of):
        if members[node][0] != index:
            continue
        up = parent[node]
        stored_parent = _NONE if up == _NONE else stored_at_or_above[up]
        if stored_parent == _NONE:
            roots_by_top.setdefault(top[node], []).append(node)
        else:
            children.setdefault(stored_parent, []).append(node)

    result: list[Conversation] = []
    for roots in roots_by_top.values():
        placements: list[Placement] = []
        stack: list[tuple[int, str | None, int]] = [(n, None, 0) for n in reversed(roots)]
        while stack:
            node, parent_key, depth = stack.pop()
            claimants = members[node]
            for index in claimants:
                placements.append(Placement(ordered[index].key, parent_key, len(placements), depth))
            below = children.get(node)
            if below:
                own_key = ordered[claimants[0]].key
                stack.extend((child, own_key, depth + 1) for child in reversed(below))
        result.append(Conversation(tuple(placements)))
    return result
