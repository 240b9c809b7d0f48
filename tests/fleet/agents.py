"""Agents acting on the fleet's mail over the MCP endpoint of a `mailfathom serve`, each act
recorded by the driver with a marker of its own so the end of the run can check that it was
carried exactly once:

- flag: `set_mail_flags` stars an INBOX message (marker: the message's Message-ID);
- move: `organize_email` archives an INBOX message (marker: its Message-ID);
- draft and send: `save_draft` then `send_draft` (marker: a subject of its own);
- send: `send_email` (marker: its subject, also its idempotency key);
- keep a draft: `save_draft` alone, whose one copy must stand in the drafts folder.

The messages acted on are picked from the store (any stored INBOX message of a random account
that no agent touched yet); a message is flagged or moved, never both."""

from __future__ import annotations

import random
import re
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from fleet.deployment import DOMAIN, FleetAccount
from mailfathom.adapters.sql.schema import drafts, folders, messages
from mcp_tests.client import call, text

ACTS = {"flag": 3, "move": 3, "draft_send": 2, "send": 2, "keep_draft": 1}
BODY = "Plain words from an agent of the fleet.\n"
_CODE = re.compile(r"\b(\d{5})\b")


@dataclass
class Intents:
    """What the agents asked for and were answered yes to."""

    flagged: set[tuple[str, str]] = field(default_factory=set)
    moved: set[tuple[str, str]] = field(default_factory=set)
    # marker -> (account, outgoingEmailId) of each send queued (draft_send and send)
    sent: dict[str, tuple[str, str]] = field(default_factory=dict)
    # marker -> (account, Message-ID) of each draft kept
    kept: dict[str, tuple[str, str]] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    acts: Counter[str] = field(default_factory=Counter)

    def figures(self) -> dict[str, Any]:
        return {
            "flagged": len(self.flagged),
            "moved": len(self.moved),
            "sends_queued": len(self.sent),
            "drafts_kept": len(self.kept),
            "refused": dict(self.refused),
        }


class Agents:
    def __init__(
        self, url: str, key: str, engine: sa.Engine, accounts: list[FleetAccount], seed: int
    ) -> None:
        self._url = url
        self._key = key
        self._engine = engine
        self._accounts = accounts
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._touched: set[tuple[str, str]] = set()
        self._number = 0
        self.intents = Intents()

    def run(self, stop: threading.Event, pause: float) -> None:
        """Act until `stop`, waiting `pause` seconds between acts."""
        while not stop.is_set():
            try:
                self.act()
            except Exception as error:  # an act that failed outright is counted, not fatal
                with self._lock:
                    self.intents.refused[f"error:{type(error).__name__}"] += 1
            stop.wait(pause)

    def act(self) -> None:
        with self._lock:
            kind = self._rng.choices(list(ACTS), weights=list(ACTS.values()))[0]
            account = self._rng.choice(self._accounts)
            self._number += 1
            number = self._number
        getattr(self, f"_{kind}")(account, number)
        with self._lock:
            self.intents.acts[kind] += 1

    def _pick(self, account: FleetAccount) -> tuple[str, str] | None:
        """An untouched INBOX message of `account`: its storedEmailId and Message-ID."""
        with self._engine.connect() as c:
            rows = c.execute(
                sa.select(messages.c.stored_email_id, messages.c.message_id_header)
                .join(folders, folders.c.folder_id == messages.c.folder_id)
                .where(
                    messages.c.account_id == account.account_id,
                    folders.c.remote_name == "INBOX",
                )
            ).all()
        with self._lock:
            free = [
                (str(r.stored_email_id), str(r.message_id_header))
                for r in rows
                if (account.account_id, str(r.message_id_header)) not in self._touched
            ]
            if not free:
                return None
            chosen = self._rng.choice(free)
            self._touched.add((account.account_id, chosen[1]))
            return chosen

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        result = call(self._url, self._key, tool, arguments)
        if result.is_error:
            found = _CODE.search(text(result))
            with self._lock:
                self.intents.refused[f"{tool}:{found.group(1) if found else 'unknown'}"] += 1
            return None
        return dict(result.structured_content or {})

    def _flag(self, account: FleetAccount, _number: int) -> None:
        picked = self._pick(account)
        if picked is None:
            return
        stored_id, message_id = picked
        if self._call("set_mail_flags", {"storedEmailId": stored_id, "flagged": True}):
            with self._lock:
                self.intents.flagged.add((account.account_id, message_id))

    def _move(self, account: FleetAccount, _number: int) -> None:
        picked = self._pick(account)
        if picked is None:
            return
        stored_id, message_id = picked
        if self._call("organize_email", {"action": "archive", "storedEmailIds": [stored_id]}):
            with self._lock:
                self.intents.moved.add((account.account_id, message_id))

    def _draft(self, account: FleetAccount, marker: str) -> dict[str, Any] | None:
        return self._call(
            "save_draft",
            {
                "account": account.account_id,
                "subject": marker,
                "to": [f"peer@{DOMAIN}"],
                "plainTextBody": BODY,
            },
        )

    def _draft_send(self, account: FleetAccount, number: int) -> None:
        marker = marker_for(account, number)
        draft = self._draft(account, marker)
        if draft is None:
            return
        sent = self._call("send_draft", {"draftId": draft["draftId"]})
        self._queued(account, marker, sent)

    def _send(self, account: FleetAccount, number: int) -> None:
        marker = marker_for(account, number)
        sent = self._call(
            "send_email",
            {
                "account": account.account_id,
                "to": [f"peer@{DOMAIN}"],
                "subject": marker,
                "plainTextBody": BODY,
                "idempotencyKey": marker,
            },
        )
        self._queued(account, marker, sent)

    def _keep_draft(self, account: FleetAccount, number: int) -> None:
        marker = marker_for(account, number)
        draft = self._draft(account, marker)
        if draft is None:
            return
        message_id = draft_message_id(self._engine, str(draft["draftId"]))
        with self._lock:
            self.intents.kept[marker] = (account.account_id, message_id)

    def _queued(self, account: FleetAccount, marker: str, sent: dict[str, Any] | None) -> None:
        if sent is not None and sent.get("status") == "queued":
            with self._lock:
                self.intents.sent[marker] = (account.account_id, str(sent["outgoingEmailId"]))


def marker_for(account: FleetAccount, number: int) -> str:
    return f"Fleet note number {number} from {account.account_id}"


def draft_message_id(engine: sa.Engine, draft_id: str) -> str:
    with engine.connect() as c:
        found = c.execute(
            sa.select(drafts.c.message_id_header).where(drafts.c.draft_id == uuid.UUID(draft_id))
        ).scalar_one()
    return str(found)
