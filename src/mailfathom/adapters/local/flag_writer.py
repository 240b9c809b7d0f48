"""Carrying flag changes to a local Maildir folder: `MaildirFlagWriter`.

A Maildir file name carries \\Seen (S) and \\Flagged (F) and no keyword, so a local folder
keeps no keyword permanently and a keyword change that adds one is dead-lettered. Local
folders keep no mod-sequences: nothing is reported as changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mailfathom.adapters.local.maildir import LocalSession
from mailfathom.app.flags.ports import StoreOutcome
from mailfathom.domain.content_state import RemoteFlags

_LETTERS = {"\\seen": "S", "\\flagged": "F"}


class MaildirFlagWriter:
    def __init__(self, session: LocalSession) -> None:
        self._session = session

    def holds_folder(self, remote_name: str) -> bool:
        return remote_name in self._session.list_folders()

    def permanent_keywords(self, remote_name: str) -> tuple[bool, frozenset[str]]:
        return False, frozenset()

    def current_keywords(self, remote_name: str, uids: Sequence[int]) -> dict[int, frozenset[str]]:
        self._session.select(remote_name)
        found = {e.uid for e in self._session.fetch_envelopes(uids)}
        return {uid: frozenset() for uid in found}

    def current_flags(self, remote_name: str, uids: Sequence[int]) -> dict[int, RemoteFlags]:
        self._session.select(remote_name)
        wanted = set(uids)
        return {c.uid: c.flags for c in self._session.all_flags() if c.uid in wanted}

    def store_flags(
        self,
        remote_name: str,
        uids: Sequence[int],
        operation: str,
        flags: Sequence[str],
        observed: Mapping[int, int] | None,
    ) -> StoreOutcome:
        letters = [_LETTERS[f.lower()] for f in flags if f.lower() in _LETTERS]
        if not letters:
            # Keywords only: a Maildir holds none, so removing them is already true.
            return StoreOutcome(frozenset(self.current_keywords(remote_name, uids)), frozenset())
        applied = set(uids)
        for letter in letters:
            applied &= self._session.reflag(remote_name, uids, letter, operation == "+")
        return StoreOutcome(frozenset(applied), frozenset())
