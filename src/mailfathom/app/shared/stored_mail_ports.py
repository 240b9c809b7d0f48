"""Ports of the stored mail: the mailbox as the use cases query it, and its content store.

Every method is synchronous, reads only the local store, opens no mail-server session and
changes nothing. Each takes the folders a request may read and never returns a row outside
them, so a withheld folder cannot leak through a method that forgot to check.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from mailfathom.app.shared.stored_mail import (
    EmailRow,
    FolderView,
    SearchRow,
    SummaryFilter,
    SummaryRow,
    ThreadMember,
    TimelinePosition,
)
from mailfathom.app.shared.vector_ports import Nearest, PendingNearest


class FolderDirectory(Protocol):
    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        """Folders of these accounts mapped visible to tools, ordered by account and alias.

        Only folders the current configuration maps are known to the store (synchronization
        creates their rows); folders whose mapping says `visible_to_tools = false` are left
        out here, which is what keeps them out of every answer."""
        ...


class MailboxReadView(FolderDirectory, Protocol):
    """The reads of listings, searches and conversations.

    One message kept in several folders of one account (Gmail lists a message in a folder
    per label, each copy the same octets) is one row of a listing, a search or a
    conversation over several folders: the copy in the first folder of `folder_ids` (the
    account's Inbox-role folder first, then its folders in the order they were first
    mapped) that passes the selection's filters and a search's words stands for it, and
    names the other folders holding a copy (`SummaryRow.other_folder_aliases`,
    `ThreadMember.copies`). Each copy has flags and a received time of its own, so a copy
    failing a filter never hides one that passes. Copies are rows of one account with the
    same content key (the SHA-256 of the octets); a message whose content is not held is
    never merged, and copies in one folder are each that folder's own row, so a folder read
    alone lists all of its copies. Limits and positions apply to the rows standing for their
    messages."""

    def summaries(
        self,
        selection: SummaryFilter,
        *,
        newest_first: bool,
        after: TimelinePosition | None,
        limit: int,
    ) -> list[SummaryRow]:
        """Up to `limit` rows in timeline order, starting after `after` when given."""
        ...

    def search(
        self,
        selection: SummaryFilter,
        words: Sequence[str],
        limit: int,
        *,
        with_bodies: bool = True,
    ) -> list[SearchRow]:
        """Up to `limit` rows carrying every one of `words` in their subject, participants or
        body, best first (ties: newest received, then highest `seq`), each with its lexical
        rank (higher is better, comparable within one call) and its indexed body text
        (empty without `with_bodies`, which leaves the bodies unread)."""
        ...

    def ranking(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        """The `seq` and lexical rank of each row `search` answers, in its order, without
        reading the rows."""
        ...

    def nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> list[Nearest]:
        """`NearestPassages.nearest`: the messages `search` could return, ranked by their
        nearest passage in `generation` instead of by words."""
        ...

    def start_nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> PendingNearest:
        """`nearest`, ranked while the caller goes on reading this view: what it answers
        is what `nearest` would have, at `PendingNearest.result`."""
        ...

    def summaries_of(self, seqs: Sequence[int], selection: SummaryFilter) -> dict[int, SummaryRow]:
        """The rows of `seqs` lying in the selection's folders, each as `search` would name it
        (with the other folders holding a copy); a message outside them is absent. The other
        filters are not applied again: `seqs` come from a read under them."""
        ...

    def indexed_texts(self, seqs: Sequence[int], folder_ids: Sequence[int]) -> dict[int, str]:
        """The body text of each message of `seqs` lying in `folder_ids`, as far as the
        lexical index holds it (what `search` returns as a row's body); a message with no
        stored text maps to "", one outside `folder_ids` is absent."""
        ...

    def emails(
        self,
        stored_email_ids: Sequence[uuid.UUID],
        folder_ids: Sequence[int],
        *,
        with_html: bool = True,
    ) -> dict[uuid.UUID, EmailRow]:
        """The named emails that lie in `folder_ids`; the others are simply absent. Without
        `with_html` the HTML body is not read (`EmailRow.html` is None)."""
        ...

    def thread(self, thread_id: uuid.UUID, folder_ids: Sequence[int]) -> list[ThreadMember]:
        """The conversation's messages that lie in `folder_ids`, each once, in the
        conversation's order (reply relation first, then sent time, then `seq`); empty when
        none is visible. A parent is named by the row standing for it, or as it is when
        `folder_ids` hold no copy of it."""
        ...

    def threads(
        self, thread_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, list[ThreadMember]]:
        """`thread` for several conversations at once; one with no visible message is
        absent."""
        ...


class MailboxReadStore(MailboxReadView, Protocol):
    def snapshot(self) -> AbstractContextManager[MailboxReadView]:
        """A view whose reads all see the store as it was at one moment, for the span of one
        request: a page, its conversations and its folders' freshness then agree even while
        synchronization commits. Each method called on the store itself is a snapshot of
        its own."""
        ...


class ContentStore(Protocol):
    """Raw MIME kept by content address (SHA-256 of the octets).

    `put` is idempotent: storing the same octets twice yields the same key and one copy, and
    a damaged copy is replaced. Both `put` and `put_many` return once the content is durable.
    `get` raises `ContentMissingError` when the copy is absent or no longer hashes to its key.
    """

    def put(self, raw: bytes) -> str: ...

    def put_many(self, raws: Sequence[bytes]) -> list[str]:
        """Store several messages, made durable together before returning."""
        ...

    def get(self, key: str) -> bytes: ...

    def get_text(self, key: str, *, with_html: bool = True) -> tuple[str, str | None]:
        """(plain, html) kept with the MIME under `key` (html None unless `with_html`);
        `ContentMissingError` when that text is absent or damaged."""
        ...

    def discard(self, key: str) -> None: ...

    def reclaim(self) -> int:
        """Give back the space of discarded content; returns how many files were removed."""
        ...

    def used_octets(self) -> int: ...


class ContentRepairStore(Protocol):
    def content_key_of(self, stored_email_id: uuid.UUID) -> tuple[str, int, str | None] | None:
        """(account, seq, content key) of the stored email, or None when none is stored."""
        ...

    def content_references(self, account_id: str | None = None) -> list[tuple[str, int, str, bool]]:
        """(account, seq, content key, whether the bodies are kept in the content store) of
        every message whose content is meant to be held locally."""
        ...

    def request_repair(self, account_id: str, seq: int, reason: str) -> None: ...
