"""A mailbox that holds no mail yet, as a deployment's store is before its first run of
synchronization: every read answers nothing, and there is no message to repair.

The use cases that write (sending, drafting) are handed it where they would look up an email
a message answers or a stored part it attaches; their tests on the fakes write messages of
their own, and answers to stored mail are tested on the real stores, where mail is held."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

from mailfathom.app.shared.stored_mail import (
    EmailRow,
    FolderView,
    SearchRow,
    SummaryFilter,
    SummaryRow,
    ThreadMember,
    TimelinePosition,
)
from mailfathom.app.shared.stored_mail_ports import (
    ContentRepairStore,
    MailboxReadStore,
    MailboxReadView,
)
from mailfathom.app.shared.vector_ports import Nearest, PendingNearest


class _NoneNearer:
    def result(self) -> list[Nearest]:
        return []


class EmptyMailbox:
    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        return []

    def summaries(
        self,
        selection: SummaryFilter,
        *,
        newest_first: bool,
        after: TimelinePosition | None,
        limit: int,
    ) -> list[SummaryRow]:
        return []

    def search(
        self,
        selection: SummaryFilter,
        words: Sequence[str],
        limit: int,
        *,
        with_bodies: bool = True,
    ) -> list[SearchRow]:
        return []

    def indexed_texts(self, seqs: Sequence[int], folder_ids: Sequence[int]) -> dict[int, str]:
        return {}

    def summaries_of(self, seqs: Sequence[int], selection: SummaryFilter) -> dict[int, SummaryRow]:
        return {}

    def ranking(
        self, selection: SummaryFilter, words: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        return []

    def nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> list[Nearest]:
        return []

    def start_nearest(
        self,
        generation: str,
        query_vector: Sequence[float],
        eligible: SummaryFilter,
        window: int,
    ) -> PendingNearest:
        return _NoneNearer()

    def emails(
        self,
        stored_email_ids: Sequence[uuid.UUID],
        folder_ids: Sequence[int],
        *,
        with_html: bool = True,
    ) -> dict[uuid.UUID, EmailRow]:
        return {}

    def thread(self, thread_id: uuid.UUID, folder_ids: Sequence[int]) -> list[ThreadMember]:
        return []

    def threads(
        self, thread_ids: Sequence[uuid.UUID], folder_ids: Sequence[int]
    ) -> dict[uuid.UUID, list[ThreadMember]]:
        return {}

    def snapshot(self) -> AbstractContextManager[MailboxReadView]:
        return nullcontext(self)

    def content_key_of(self, stored_email_id: uuid.UUID) -> tuple[str, int, str | None] | None:
        return None

    def content_references(self, account_id: str | None = None) -> list[tuple[str, int, str, bool]]:
        return []

    def request_repair(self, account_id: str, seq: int, reason: str) -> None:
        """No row answers to `seq`: a use case that asks has read a row from elsewhere."""
        raise LookupError("no message is held to repair")


_: MailboxReadStore = EmptyMailbox()
__: ContentRepairStore = EmptyMailbox()
