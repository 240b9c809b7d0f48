"""Mail arriving in the fleet's mailboxes, written into the Maildir as a delivery agent does
(a file made in tmp/ and renamed into new/, or into cur/ for a backlog written before the
server first looks), each message with a Message-ID of its own, recorded as delivered."""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

from fleet.deployment import DOMAIN, FleetAccount

_SEQUENCE = iter(range(1, 10**12))
_SEQUENCE_LOCK = threading.Lock()


def _next() -> int:
    with _SEQUENCE_LOCK:
        return next(_SEQUENCE)


def arrival(account: FleetAccount, run: str) -> tuple[str, bytes]:
    """A new message for `account`: its Message-ID and its bytes."""
    number = _next()
    message_id = f"<arrival.{run}.{account.account_id}.{number}@{DOMAIN}>"
    message = EmailMessage()
    message["From"] = f"Fleet Sender <sender{number % 7}@{DOMAIN}>"
    message["To"] = account.address
    message["Subject"] = f"Arrival {number} for {account.account_id}"
    message["Date"] = format_datetime(datetime.now(UTC))
    message["Message-ID"] = message_id
    message.set_content("A few plain words, the same in every arrival.\n")
    return message_id, bytes(message)


class Arrivals:
    """Every message delivered, by account (thread-safe)."""

    def __init__(self, run: str) -> None:
        self.run = run
        self._lock = threading.Lock()
        self._delivered: dict[str, list[str]] = defaultdict(list)

    def deliver(self, account: FleetAccount, *, backlog: bool = False) -> str:
        message_id, raw = arrival(account, self.run)
        _write(account, raw, "cur" if backlog else "new")
        with self._lock:
            self._delivered[account.account_id].append(message_id)
        return message_id

    def delivered(self) -> dict[str, list[str]]:
        with self._lock:
            return {k: list(v) for k, v in self._delivered.items()}

    def count(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._delivered.values())


def _write(account: FleetAccount, raw: bytes, where: str) -> None:
    inbox = account.maildir / "INBOX"
    name = f"{time.time_ns()}.P{os.getpid()}T{threading.get_ident()}.fleet,S={len(raw)}"
    temporary = inbox / "tmp" / name
    with open(temporary, "wb") as handle:
        handle.write(raw)
    if os.geteuid() == 0:
        os.chown(temporary, account.mail_uid, account.mail_gid)
    temporary.rename(inbox / where / (name + (":2," if where == "cur" else "")))
