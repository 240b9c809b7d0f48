"""Ports of the operator's upkeep of the local store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from mailfathom.domain.conversations import ThreadInput


class ConversationStore(Protocol):
    def thread_inputs(self, account_id: str) -> list[ThreadInput]: ...

    def rederive_conversations(self, account_id: str) -> int: ...


class FolderProgress(Protocol):
    """How far synchronization has taken one mapped folder."""

    @property
    def folder_id(self) -> int: ...

    @property
    def remote_name(self) -> str: ...

    @property
    def last_committed_at(self) -> datetime | None: ...


class StoreOverviewStore(Protocol):
    def message_counts(self, account_id: str) -> dict[int, int]:
        """Messages held per folder identifier."""
        ...

    def folders_of(self, account_id: str) -> Sequence[FolderProgress]: ...

    def summary(self, account_id: str) -> list[tuple[str, int, int, int, int]]:
        """Per folder: alias, messages, conversations, messages with attachments, unread."""
        ...


class ContentUpkeepStore(Protocol):
    def sweep_temporary(self) -> int:
        """Remove what killed writers left behind; returns how many files were removed."""
        ...

    def reclaim(self) -> int:
        """Give back the space of discarded content; returns how many files were removed."""
        ...
