"""Reading reference thread trees and checking assembled conversations against them.

Reference answers come in the nested-parenthesis form of RFC 5256 section 4
(``(3 6 (4 23)(44 7 96))``): inside a list, each bare item is the child of the item before
it; a nested list is a subtree whose first item is a child of the last bare item before
it; a list that starts with a nested list has no stored root (its subtrees share a
placeholder parent that the answer does not name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from mailfathom.adapters.mime import normalize_message
from mailfathom.domain.conversations import (
    Conversation,
    ThreadInput,
    thread_input_from,
)
from mailfathom.domain.identifiers import normalize_references

Tree: TypeAlias = "list[str | Tree]"


@dataclass(frozen=True)
class Layout:
    """A set of threads reduced to what is compared: parents, membership and order."""

    parent: dict[str, str | None]
    thread_of: dict[str, int]
    threads: list[list[str]]  # each thread's members in reading (depth-first) order

    def members(self, key: str) -> frozenset[str]:
        return frozenset(self.threads[self.thread_of[key]])

    def children(self) -> dict[str | None, list[str]]:
        """Children of every node in reading order (roots of all threads under None)."""
        result: dict[str | None, list[str]] = {}
        for thread in self.threads:
            for key in thread:
                result.setdefault(self.parent[key], []).append(key)
        return result


def parse_thread_answer(text: str) -> list[Tree]:
    """The threads of a ``* THREAD`` response body, as nested lists of message numbers."""
    stack: list[list[str | Tree]] = [[]]
    for token in re.findall(r"\(|\)|[0-9]+", text):
        if token == "(":
            child: list[str | Tree] = []
            stack[-1].append(child)
            stack.append(child)
        elif token == ")":
            stack.pop()
        else:
            stack[-1].append(token)
    if len(stack) != 1:
        raise ValueError(f"unbalanced thread answer: {text!r}")
    return [item for item in stack[0] if isinstance(item, list)]


def layout_of_trees(threads: Sequence[Tree]) -> Layout:
    """Parents, membership and reading order of RFC 5256 section 4 thread trees."""
    parent: dict[str, str | None] = {}
    thread_of: dict[str, int] = {}
    ordered: list[list[str]] = []
    for number, thread in enumerate(threads):
        members: list[str] = []
        # Work list of (items, parent of the first bare item), kept in reading order.
        pending: list[tuple[Sequence[str | Tree], str | None]] = [(thread, None)]
        while pending:
            items, previous = pending.pop()
            subtrees: list[tuple[Sequence[str | Tree], str | None]] = []
            for item in items:
                if isinstance(item, str):
                    if subtrees:
                        raise ValueError("a bare item after a subtree is not RFC 5256 form")
                    parent[item] = previous
                    thread_of[item] = number
                    members.append(item)
                    previous = item
                else:
                    subtrees.append((item, previous))
            pending.extend(reversed(subtrees))
        ordered.append(members)
    return Layout(parent, thread_of, ordered)


def layout_of_conversations(conversations: Iterable[Conversation]) -> Layout:
    parent: dict[str, str | None] = {}
    thread_of: dict[str, int] = {}
    ordered: list[list[str]] = []
    for number, conversation in enumerate(conversations):
        ordered.append([p.key for p in conversation.members])
        for placement in conversation.members:
            parent[placement.key] = placement.parent_key
            thread_of[placement.key] = number
    return Layout(parent, thread_of, ordered)


def thread_input_of_file(key: str, path: Path) -> ThreadInput:
    return thread_input_from(key, normalize_message(path.read_bytes()))


def check_invariants(inputs: Sequence[ThreadInput], conversations: Sequence[Conversation]) -> None:
    """What must hold for any input: see `test_assembler_properties` for the reasons."""
    keys = [p.key for c in conversations for p in c.members]
    assert sorted(keys) == sorted(m.key for m in inputs), "every message exactly once"
    for conversation in conversations:
        assert conversation.members, "no empty conversation"
        seen: dict[str, int] = {}
        for position, placement in enumerate(conversation.members):
            assert placement.position == position
            if placement.parent_key is None:
                assert placement.depth == 0
            else:
                assert placement.parent_key in seen, "a parent comes before its replies"
                parent_depth = conversation.members[seen[placement.parent_key]].depth
                assert placement.depth == parent_depth + 1
            seen[placement.key] = position


def claimed_parent(message: ThreadInput) -> str | None:
    """The identifier a message names as the one it answers (RFC 5256 section 2.2)."""
    refs = normalize_references(message.references, message.in_reply_to, message.message_id)
    return refs[-1] if refs else None
