"""Folder roles and the rules for aliases."""

from __future__ import annotations

import enum


class FolderRole(enum.Enum):
    """The part a folder plays for its account (RFC 6154 special-use, plus Inbox)."""

    INBOX = "Inbox"
    SENT = "Sent"
    DRAFTS = "Drafts"
    JUNK = "Junk"
    TRASH = "Trash"
    ARCHIVE = "Archive"
    FLAGGED = "Flagged"
    ALL = "All"

    @classmethod
    def parse(cls, text: str) -> FolderRole | None:
        wanted = text.strip().lower()
        for role in cls:
            if role.value.lower() == wanted:
                return role
        return None
