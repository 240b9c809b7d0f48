"""A local account whose callers are asked before mail leaves, served by `mailfathom serve`
with `/metrics`, and the official client driving it.

Nothing leaves: sends wait an hour and the server runs no delivery pass. `asks` and
`asks-too` have a person confirm every send; `reader` only reads. One caller may keep
`WAITING` questions waiting, more than the worker threads a process has by default (40), so a
test can hold more questions open than there are workers.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import sqlalchemy as sa
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestParams, ElicitResult
from prometheus_client.parser import text_string_to_metric_families

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from sending.served import Served, serve

KEYS = {
    name: f"key-{name}-{uuid.uuid4().hex}" for name in ("asks", "asks-too", "reader", "metrics")
}
WAITING = 45
MODES = ["2026-07-28", "legacy"]
# How long a condition the test waits for may take before the test fails.
DEADLINE = 60.0


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _config(root: Path) -> str:
    return f"""
[Store]
DataDir = "{root / "data"}"

[Sync]
Enabled = false

[MailDelivery]
HoldSeconds = 3600

[[Accounts]]
Id = "work"
DisplayName = "Work"
Kind = "local"
Addresses = ["desk@example.org"]

[[Accounts.Folders]]
Remote = "INBOX"
Role = "Inbox"

[Accounts.Delivery]
Enabled = true
Address = "desk@example.org"
DisplayName = "Front Desk"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"
ConfirmationTimeoutSeconds = 900
QuestionsWaitingPerCaller = {WAITING}
MetricsApiKeySha256 = "{_digest(KEYS["metrics"])}"

[[McpEndpoint.Callers]]
Name = "asks"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["asks"])}"
Confirmation = "ask"

[[McpEndpoint.Callers]]
Name = "asks-too"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["asks-too"])}"
Confirmation = "ask"

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{_digest(KEYS["reader"])}"
Permissions = ["mailfathom.mail.read"]
"""


def serve_asking(root: Path) -> Iterator[Served]:
    yield from serve(root, _config(root), None, deliver=False)


@asynccontextmanager
async def connected(
    served: Served, caller: str, mode: str, person: ElicitationFnT | None = None
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {KEYS[caller]}"}
    # Enough connections for every question held open at once, and none timed out while a
    # person decides.
    limits = httpx2.Limits(max_connections=4 * WAITING)
    timeout = httpx2.Timeout(30, read=None)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, limits=limits) as http,
        Client(
            streamable_http_client(served.url, http_client=http),
            mode=mode,
            elicitation_callback=person,
        ) as client,
    ):
        yield client


class HeldPerson:
    """Holds every question it is asked until released, then answers as told."""

    def __init__(self, choice: str = "cancel") -> None:
        self.choice = choice
        self.asked: list[ElicitRequestParams] = []
        self._held: list[anyio.Event] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        held = anyio.Event()
        self.asked.append(params)
        self._held.append(held)
        await held.wait()
        return ElicitResult(action="accept", content={"choice": self.choice})

    def release(self, count: int | None = None) -> None:
        waiting = [e for e in self._held if not e.is_set()]
        for event in waiting[:count]:
            event.set()


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for `condition` on the event loop, failing with `what` past the deadline."""
    with anyio.move_on_after(DEADLINE):
        while not condition():
            await anyio.sleep(0.05)
        return
    raise AssertionError(f"{what} within {DEADLINE:g} s")


def send_arguments(subject: str, body: str, **more: Any) -> dict[str, Any]:
    return {
        "account": "work",
        "to": ["guest@example.net"],
        "subject": subject,
        "plainTextBody": body,
        "idempotencyKey": uuid.uuid4().hex,
        **more,
    }


def metric(served: Served, name: str, labels: dict[str, str]) -> float:
    """The value `/metrics` publishes for the sample `name` with `labels` (0 when none)."""
    url = served.url.removesuffix("/mcp") + "/metrics"
    answer = httpx2.get(url, headers={"Authorization": f"Bearer {KEYS['metrics']}"})
    assert answer.status_code == 200
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def log_events(served: Served, event: str) -> list[dict[str, Any]]:
    """The lines the server logged for `event`."""
    found = []
    for line in (served.data_dir.parent / "server.log").read_text("utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("event") == event:
            found.append(entry)
    return found


def written(served: Served) -> tuple[set[str], int, int]:
    """The idempotency keys in the outbox, and how many drafts and owner alerts are held."""
    with Services.open(load_config(served.config_path)) as services:
        keys = {entry.idempotency_key for entry in services.outbox().listing(1000)}
        alerts = len(services.alerts().listing(True, 1000))
        with services.engine.connect() as connection:
            drafts = connection.exec_driver_sql("SELECT count(*) FROM drafts").scalar_one()
    return keys, int(drafts), alerts


def stored_mime(services: Services, outgoing_id: uuid.UUID) -> bytes:
    """The message the outbox holds for a send, as it will leave."""
    key: object = outgoing_id.hex if services.engine.dialect.name == "sqlite" else outgoing_id
    with services.engine.connect() as connection:
        found = connection.execute(
            sa.text("SELECT mime FROM outgoing_emails WHERE outgoing_id = :id"), {"id": key}
        )
        return bytes(found.scalar_one())
