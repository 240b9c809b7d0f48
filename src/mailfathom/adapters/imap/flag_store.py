"""Carrying flag changes to an IMAP folder: `ImapFlagWriter` over one session.

The folder is opened read-write (SELECT) for the commands and nothing else is done in it;
a synchronization pass opens it again read-only afterwards. Where the server offers
CONDSTORE each command carries UNCHANGEDSINCE (RFC 7162 section 3.1.3) with the
mod-sequence the local copy last observed, or the one this writer's own earlier command left
on that message, whichever is higher, so a change of this run never counts as somebody
else's. The server names what it refused in a MODIFIED response code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mailfathom.adapters.imap.responses import FetchItems, parse_uid_set
from mailfathom.adapters.imap.session import ImapSession
from mailfathom.app.flags.ports import StoreOutcome
from mailfathom.domain.content_state import RemoteFlags


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class ImapFlagWriter:
    def __init__(self, session: ImapSession) -> None:
        self._session = session
        self._selected: str | None = None
        self._permanent: tuple[bool, frozenset[str]] = (False, frozenset())
        # The mod-sequence each of this writer's commands left, per (folder, UID).
        self._left: dict[tuple[str, int], int] = {}

    def _open(self, remote_name: str) -> None:
        if self._selected == remote_name:
            return
        info = self._session.select_for_writing(remote_name)
        names = {_text(f).lower() for f in info.get(b"PERMANENTFLAGS", ())}
        self._permanent = (
            "\\*" in names,
            frozenset(n for n in names if not n.startswith("\\")),
        )
        self._selected = remote_name

    def holds_folder(self, remote_name: str) -> bool:
        return remote_name in self._session.list_folders()

    def permanent_keywords(self, remote_name: str) -> tuple[bool, frozenset[str]]:
        self._open(remote_name)
        return self._permanent

    def current_keywords(self, remote_name: str, uids: Sequence[int]) -> dict[int, frozenset[str]]:
        self._open(remote_name)
        return {c.uid: c.flags.keywords for c in self._session.flags_of(uids)}

    def current_flags(self, remote_name: str, uids: Sequence[int]) -> dict[int, RemoteFlags]:
        self._open(remote_name)
        return {c.uid: c.flags for c in self._session.flags_of(uids)}

    def store_flags(
        self,
        remote_name: str,
        uids: Sequence[int],
        operation: str,
        flags: Sequence[str],
        observed: Mapping[int, int] | None,
    ) -> StoreOutcome:
        self._open(remote_name)
        current = {c.uid: c.modseq for c in self._session.flags_of(uids)}
        present = set(current)
        modified: set[int] = set()
        item = f"{operation}FLAGS"
        if observed is not None and self._session.supports_condstore:
            # UNCHANGEDSINCE takes one value for the whole command (RFC 7162 section 3.1.3),
            # so each message is first held to its own: one changed after the mod-sequence
            # the local copy (or this run's own command) left for it is a conflict. The rest
            # go with the highest mod-sequence they showed just now, which still refuses a
            # change another client makes between this FETCH and the STORE.
            for uid, modseq in current.items():
                known = max(observed.get(uid, 0), self._left.get((remote_name, uid), 0))
                if modseq is not None and modseq > known:
                    modified.add(uid)
            present -= modified
            if present:
                since = max(current[u] or 0 for u in present)
                item = f"(UNCHANGEDSINCE {since}) {item}"
        if not present:
            return StoreOutcome(frozenset(), frozenset(modified))
        data, codes = self._session.uid_store(sorted(present), item, f"({' '.join(flags)})")
        for code in codes:
            modified.update(parse_uid_set(_text(code)))
        left: dict[int, int] = {}
        for entry in data:
            text = entry[0] if isinstance(entry, tuple) else entry
            parsed = FetchItems(text) if isinstance(text, bytes) else None
            if parsed is not None and parsed.uid in present and parsed.modseq is not None:
                left[parsed.uid] = parsed.modseq
                self._left[(remote_name, parsed.uid)] = parsed.modseq
        return StoreOutcome(frozenset(present - modified), frozenset(modified & set(current)), left)
