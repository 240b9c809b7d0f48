"""Local accounts are peers: each one's own address is an asserted contact in the book, so
an account finds a colleague account with list_contacts and writes to the address shown.

The peer records follow the configuration: written when an account appears, rewritten when
its name or addresses change, erased when it goes. The note on a peer record is the owner's
and is kept. An address an owner's own (non-peer) asserted record already holds stays with
that record; one a collected record holds moves to the peer. A peer record is held to the
rules of every asserted record: an account with more addresses than one holds is the first
MAX_ADDRESSES of them, and one whose name holds a character that renders as nothing is named
by its account identifier.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mailfathom.app.contacts.ports import ContactBook, PeerEntry, PeerUpkeep
from mailfathom.domain import addresses, text_rules
from mailfathom.domain.config import AccountKind, DeploymentConfig
from mailfathom.domain.contacts import MAX_ADDRESSES, address_key


def peer_entries(config: DeploymentConfig) -> list[PeerEntry]:
    """One entry per local account that receives at a plain address."""
    entries: list[PeerEntry] = []
    for account in config.accounts:
        if account.kind is not AccountKind.LOCAL:
            continue
        delivery = account.delivery
        written = list(account.addresses)
        if delivery is not None and delivery.address is not None:
            written.insert(0, delivery.address)
        spelt: dict[str, str] = {}
        for address in written:
            if addresses.is_plain_address(address):
                spelt.setdefault(address_key(address), address)
        if not spelt:
            continue
        name = (delivery.display_name if delivery else None) or account.display_name
        if not text_rules.is_shown_name(name):
            # A record's name holds no character that renders as nothing; the account's
            # identifier always may stand as one.
            name = account.account_id
        # A record holds at most MAX_ADDRESSES: the first ones written, the delivery
        # address first, so the peer record stays one the book's rules allow.
        held = tuple(spelt.values())[:MAX_ADDRESSES]
        entries.append(PeerEntry(account.account_id, name, held, held[0]))
    return entries


def keep_peers_in_step(
    book: ContactBook, config: DeploymentConfig, clock: Callable[[], datetime]
) -> PeerUpkeep:
    return book.keep_peers(peer_entries(config), clock())
