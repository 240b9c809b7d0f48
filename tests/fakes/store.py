"""One in-memory store: the fakes that share state, as the tables of one database do."""

from __future__ import annotations

from fakes.answering import MemoryChatHealth, MemoryLedger
from fakes.contacts import InMemoryContactBook
from fakes.drafts import InMemoryDraftStore
from fakes.folder_creations import InMemoryFolderCreations
from fakes.local_copy import InMemoryLocalCopy
from fakes.mutations import InMemoryMutationStore
from fakes.outbox import InMemoryOutbox
from fakes.owner_alerts import InMemoryOwnerAlerts


class MemoryStore:
    def __init__(self) -> None:
        self.outbox = InMemoryOutbox()
        self.drafts = InMemoryDraftStore(self.outbox)
        self.alerts = InMemoryOwnerAlerts()
        self.drafts.hold_alerts(self.alerts)
        self.contacts = InMemoryContactBook()
        self.local = InMemoryLocalCopy()
        self.mutations = InMemoryMutationStore(self.local)
        self.creations = InMemoryFolderCreations(self.local)
        self.answering_ledger = MemoryLedger()
        self.chat_health = MemoryChatHealth()
