"""Who may call what: permissions, tool categories, and the caller a use case serves."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Permission(enum.Enum):
    """The permission names a caller's grant is written in. No name implies another."""

    MAIL_READ = "mailfathom.mail.read"
    FLAGS_WRITE = "mailfathom.mail.flags.write"
    ORGANIZE = "mailfathom.mail.organize"
    SEND = "mailfathom.mail.send"
    DRAFTS_WRITE = "mailfathom.mail.drafts.write"
    ASK = "mailfathom.mail.ask"
    CONTACTS_READ = "mailfathom.mail.contacts.read"
    CONTACTS_WRITE = "mailfathom.mail.contacts.write"
    FILES_WRITE = "mailfathom.files.write"

    @classmethod
    def parse(cls, text: str) -> Permission | None:
        for member in cls:
            if member.value == text:
                return member
        return None


class ConfirmationMode(enum.Enum):
    """Whether a person is asked before mail a caller composed leaves: `none` sends as the
    caller asked; `ask` puts the message in front of a person through the caller's client,
    and without an answer of Send nothing is sent."""

    NONE = "none"
    ASK = "ask"


class ToolCategory(enum.Enum):
    """What a tool is for. The set is closed: a name outside it is unknown, never new."""

    MAILBOX = "mailbox"
    FLAGS = "flags"
    ORGANIZE = "organize"
    SENDING = "sending"
    DRAFTS = "drafts"
    ANSWERING = "answering"
    CONTACTS = "contacts"

    @classmethod
    def parse(cls, text: str) -> ToolCategory | None:
        wanted = text.strip().lower()
        for member in cls:
            if member.value == wanted:
                return member
        return None


ALL_PERMISSIONS = frozenset(Permission)


@dataclass(frozen=True, slots=True)
class Caller:
    """The party a use case serves: what it was granted, and a label for counting its calls.

    `label` is the operator's name for the admission entry, never a credential.
    `confirmation` is the entry's own setting: nothing a caller sends can change it."""

    permissions: frozenset[Permission]
    label: str
    confirmation: ConfirmationMode = ConfirmationMode.NONE

    def may(self, permission: Permission) -> bool:
        return permission in self.permissions
