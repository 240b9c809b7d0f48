"""Moving messages between IMAP folders: `ImapMoveWriter` over one session.

MOVE (RFC 6851) where the server offers it; otherwise COPY, then STORE \\Deleted and UID
EXPUNGE of exactly the copied UIDs (RFC 4315 section 2.1). Where neither MOVE nor UIDPLUS is
offered, nothing is moved: a bare EXPUNGE would also remove whatever else the owner marked
\\Deleted in the folder. The server names the new UIDs in a COPYUID response code (RFC 4315
section 3), which MOVE sends untagged and COPY in its tagged answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from mailfathom.adapters.imap.responses import parse_uid_set
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.domain.errors import SyncError


def copied_uids(codes: Sequence[str]) -> dict[int, int]:
    """Source UID to destination UID from COPYUID data ("uidvalidity source-set dest-set"):
    both sets name their UIDs in the same order, ascending by source UID."""
    mapping: dict[int, int] = {}
    for code in codes:
        parts = code.split()
        if len(parts) != 3:
            continue
        sources, targets = _ordered(parts[1]), _ordered(parts[2])
        if len(sources) == len(targets):
            mapping.update(zip(sources, targets, strict=True))
    return mapping


def _ordered(text: str) -> list[int]:
    """A sequence-set's UIDs in the order written (a range is read low to high)."""
    found: list[int] = []
    for part in text.split(","):
        found.extend(parse_uid_set(part))
    return found


class ImapMoveWriter:
    def __init__(self, session: ImapSession) -> None:
        self._session = session
        self._selected: str | None = None
        # The UIDVALIDITY each source was last checked against, to check it again on reopening.
        self._expected: dict[str, int] = {}

    def can_move(self) -> bool:
        return self._session.supports_move or self._session.supports_uidplus

    def destination(self, remote_name: str) -> tuple[int, int]:
        return self._session.folder_next(remote_name)

    def holds_folder(self, remote_name: str) -> bool:
        return remote_name in self._session.list_folders()

    def present(self, remote_name: str, uids: Sequence[int], uidvalidity: int) -> set[int]:
        info = self._session.select_for_writing(remote_name)
        self._selected = remote_name
        self._expected[remote_name] = uidvalidity
        if int(info.get(b"UIDVALIDITY", -1)) != uidvalidity:
            self._selected = None
            return set()
        return {c.uid for c in self._session.flags_of(uids)}

    def transfer(self, source: str, uids: Sequence[int], destination: str) -> dict[int, int]:
        self._reopen(source, uids)
        command = "MOVE" if self._session.supports_move else "COPY"
        return copied_uids(self._session.transfer(uids, destination, command))

    def _reopen(self, source: str, uids: Sequence[int]) -> None:
        if self._selected == source:
            return
        if source not in self._expected or not self.present(source, uids, self._expected[source]):
            raise SyncError("The source folder changed before the move was issued.")

    def find(self, destination: str, since_uid: int, message_id: str) -> int | None:
        self._session.select_for_writing(destination)
        self._selected = destination
        found = self._session.search_message_id(since_uid, message_id)
        return min(found) if found else None

    def remove_originals(self, source: str, uids: Sequence[int]) -> None:
        self._reopen(source, uids)
        present = {c.uid for c in self._session.flags_of(uids)}
        if present:
            self._session.expunge_selected(sorted(present))
