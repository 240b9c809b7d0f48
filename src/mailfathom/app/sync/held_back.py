"""Content a folder's earlier passes left behind, fetched again.

Two kinds wait: content found missing or damaged (always fetched), and content that arrived
while storage was at its ceiling (fetched, in the order the store names them, as far as the
room now left allows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mailfathom.app.shared.stored_mail_ports import ContentStore
from mailfathom.app.sync.ports import MailboxSession, MessagePreparer, SyncStore
from mailfathom.app.sync.trust_step import TrustStep
from mailfathom.app.sync.types import PreparedMessage


@dataclass(frozen=True, slots=True)
class HeldBackSources:
    store: SyncStore
    content: ContentStore
    preparer: MessagePreparer
    # Octets storage may still take (None: no ceiling); asked only when something waits.
    room_left: Callable[[], int | None]
    # Asked again about a message whose whole content arrives (None: nothing is recorded).
    trust: TrustStep | None = None


def fetch_held_back(
    session: MailboxSession, sources: HeldBackSources, folder_id: int, uidvalidity: int
) -> int:
    """Fetch and store what waits in the selected folder; answer how many bodies were filled."""
    store = sources.store
    repair = store.awaiting_repair(folder_id, uidvalidity)
    waiting = store.awaiting_headroom(folder_id, uidvalidity)
    if not repair and not waiting:
        return 0
    room = sources.room_left()
    wanted = list(repair)
    for envelope in session.fetch_envelopes(waiting) if waiting else []:
        if room is not None and envelope.size_octets > room:
            continue
        wanted.append(envelope.uid)
        if room is not None:
            room -= envelope.size_octets
    filled = 0
    for fetched in session.fetch_bodies(wanted):
        key = sources.content.put(fetched.raw)
        normalized = sources.preparer.message(fetched.raw)
        verdict, reading = (None, None)
        if sources.trust is not None:
            # DKIM needs the body this message was first stored without.
            verdict, reading = sources.trust.readings_of(
                fetched.raw, PreparedMessage(key, normalized)
            )
        store.fill_content(
            folder_id,
            uidvalidity,
            fetched.uid,
            normalized,
            key,
            verdict=verdict,
            authorship=reading,
        )
        filled += 1
    return filled
