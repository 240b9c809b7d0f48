"""Re-assembling the conversations of stored mail from its message identifiers."""

from __future__ import annotations

from mailfathom.app.maintenance.ports import ConversationStore


class ConversationRederivation:
    def __init__(self, store: ConversationStore) -> None:
        self._store = store

    def rederive(self, account_id: str) -> int:
        """How many messages were placed in conversations."""
        return self._store.rederive_conversations(account_id)
