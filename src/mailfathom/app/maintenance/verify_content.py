"""Reading a message's raw MIME from the local copy, and asking for repair when it is gone.

Reading never reaches a mail server: content that is missing or no longer matches its hash is
answered with `ContentMissingError` (55001) and a durable repair request, which the account's
next synchronization pass acts on by fetching the message again.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import structlog

from mailfathom.app.maintenance.ports import ContentUpkeepStore
from mailfathom.app.shared.stored_mail_ports import ContentRepairStore, ContentStore
from mailfathom.domain.errors import ContentMissingError

log = structlog.get_logger("mailfathom.content")


@dataclass(frozen=True, slots=True)
class ContentCheck:
    """How many stored copies a check read, and how many of them were missing or damaged
    (each now has a repair request)."""

    checked: int
    bad: int


class StoredContentReader:
    def __init__(self, store: ContentRepairStore, content: ContentStore) -> None:
        self._store = store
        self._content = content

    def read(self, stored_email_id: UUID) -> bytes | None:
        """The raw MIME, or None when the message holds none by design (over the size limit,
        awaiting headroom) or no such message is stored."""
        found = self._store.content_key_of(stored_email_id)
        if found is None:
            return None
        account_id, seq, key = found
        if key is None:
            return None
        try:
            return self._content.get(key)
        except ContentMissingError:
            self._store.request_repair(account_id, seq, "content-unreadable")
            log.warning("content.repair_requested")
            raise

    def verify_all(self, account_id: str | None = None) -> int:
        """How many stored messages `check_account` found bad."""
        return self.check_account(account_id).bad

    def check_account(self, account_id: str | None = None) -> ContentCheck:
        """Check every stored message's MIME, and its bodies where the content store keeps
        them; file a repair request for each message with anything missing or damaged."""
        checked = bad = 0
        for account, seq, key, text_held in self._store.content_references(account_id):
            checked += 1
            try:
                self._content.get(key)
                if text_held:
                    self._content.get_text(key)
            except ContentMissingError:
                self._store.request_repair(account, seq, "content-unreadable")
                bad += 1
        return ContentCheck(checked=checked, bad=bad)


class ContentFileUpkeep:
    """Tidies the content store's files before a check: left-overs of killed writers, and
    packs mostly made of discarded copies."""

    def __init__(self, content: ContentUpkeepStore) -> None:
        self._content = content

    def tidy(self) -> int:
        """How many files were removed."""
        return self._content.sweep_temporary() + self._content.reclaim()
