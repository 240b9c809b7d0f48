"""`mailfathom serve` as two replicas on one PostgreSQL behind a load balancer alternating
requests with no affinity (nginx, round robin), met by the official MCP client in both
protocol generations and by plain HTTP where the status itself is what is shown.

What is shown: a listing walked page by page with its cursor across replicas; a send that
needs a person's yes, asked by one replica and answered through the other, sent once; the
bound on sessions per caller entry reached with sessions on both replicas; a session id of
another caller, or made up, refused by both. Where a test must know which replica serves
a request it addresses that replica past the balancer.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from email import message_from_bytes
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from confirmation.asking import Person, choosing
from confirmation.asking_served import HeldPerson, until
from log_audit import register_all
from mcp_tests.client import code, structured
from sending.helpers import SMTP_PASSWORD, SMTP_USER
from servers.dovecot import DovecotServer
from servers.postgres import PostgresServer
from servers.smtp import SmtpServer
from waiting import wait_for

from .deployment import (
    KEYS,
    QUESTIONS_WAITING,
    SESSIONS_PER_CALLER,
    SUBJECTS,
    Replicated,
    serve_replicas,
)

MODES = ["2026-07-28", "legacy"]
HANDSHAKE = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def smtp() -> Iterator[SmtpServer]:
    server = SmtpServer({SMTP_USER: SMTP_PASSWORD}).start()
    yield server
    server.close()


@pytest.fixture(scope="module")
def replicated(
    dovecot: DovecotServer,
    smtp: SmtpServer,
    postgres_server: PostgresServer,
    migrated_postgres_template: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Replicated]:
    suffix = uuid.uuid4().hex[:10]
    account = dovecot.add_user(f"replicas-{suffix}", f"pw-{suffix}")
    name = f"t_{uuid.uuid4().hex[:16]}"
    url = postgres_server.create_database(name, template=migrated_postgres_template)
    try:
        yield from serve_replicas(tmp_path_factory.mktemp("replicas"), url, account, smtp)
    finally:
        postgres_server.drop_database(name)


async def _client_calls(
    replicated: Replicated,
    mode: str,
    calls: list[tuple[str, dict[str, Any]]],
    person: Person | None = None,
) -> list[CallToolResult]:
    headers = {"Authorization": f"Bearer {KEYS['asks']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=90)) as http,
        Client(
            streamable_http_client(replicated.url, http_client=http),
            mode=mode,
            elicitation_callback=person,
        ) as client,
    ):
        return [await client.call_tool(tool, arguments) for tool, arguments in calls]


def _pages(replicated: Replicated, mode: str) -> list[list[str]]:
    async def walk() -> list[list[str]]:
        headers = {"Authorization": f"Bearer {KEYS['asks']}"}
        pages: list[list[str]] = []
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=90)) as http,
            Client(streamable_http_client(replicated.url, http_client=http), mode=mode) as client,
        ):
            arguments: dict[str, Any] = {"pageSize": 2, "direction": "oldestFirst"}
            while True:
                page = structured(await client.call_tool("list_emails", arguments))
                pages.append([e["subject"] for e in page["emails"]])
                cursor = page.get("nextCursor")
                if cursor is None:
                    return pages
                arguments = {**arguments, "cursor": cursor}

    return anyio.run(walk)


def _upstreams(replicated: Replicated, since: int) -> set[int]:
    return {port for port, _, _ in replicated.balancer.served(since)}


def _logged(replicated: Replicated) -> int:
    return len(replicated.balancer.served())


@pytest.mark.parametrize("mode", MODES)
def test_a_listing_is_paged_with_its_cursor_across_replicas(
    replicated: Replicated, mode: str
) -> None:
    since = _logged(replicated)
    pages = _pages(replicated, mode)
    assert pages == [SUBJECTS[0:2], SUBJECTS[2:4], SUBJECTS[4:5]]
    assert _upstreams(replicated, since) == set(replicated.replica_ports)


def _routed_answers(replicated: Replicated) -> int:
    return sum(log.read_text("utf-8").count("mcp.answer_routed") for log in replicated.logs)


@pytest.mark.parametrize("mode", MODES)
def test_a_send_asked_on_one_replica_is_answered_through_the_other_and_sent_once(
    replicated: Replicated, smtp: SmtpServer, mode: str
) -> None:
    subject = f"Table for Saturday {uuid.uuid4().hex[:8]}"
    register_all([subject])
    arguments = {
        "account": "work",
        "to": ["friend@example.org"],
        "subject": subject,
        "plainTextBody": "Shall we book the table by the window?\n",
        "idempotencyKey": uuid.uuid4().hex,
    }
    routed_before = _routed_answers(replicated)
    since = _logged(replicated)
    person = Person(choosing("send"))
    # Two sends in one session: whichever replica asks, one of the two answers lands on
    # the other one, since the balancer alternates every request.
    results = anyio.run(
        _client_calls,
        replicated,
        mode,
        [
            ("send_email", arguments),
            ("send_email", {**arguments, "idempotencyKey": uuid.uuid4().hex}),
        ],
        person,
    )
    assert [structured(r)["status"] for r in results] == ["queued", "queued"]
    assert len(person.asked) == 2
    assert _upstreams(replicated, since) == set(replicated.replica_ports)
    if mode == "legacy":
        assert _routed_answers(replicated) > routed_before

    def delivered() -> list[str]:
        found = [message_from_bytes(r.content)["Subject"] for r in smtp.received()]
        return [s for s in found if s == subject]

    wait_for(lambda: len(delivered()) >= 2, "both sends reached the SMTP server")
    time.sleep(2)
    assert len(delivered()) == 2


def _direct(replicated: Replicated) -> list[str]:
    """Each replica's own address, past the balancer: where a test must know which replica
    serves a request."""
    return [f"http://127.0.0.1:{port}/mcp" for port in replicated.replica_ports]


def test_questions_waiting_are_bounded_per_caller_over_both_replicas(
    replicated: Replicated,
) -> None:
    person = HeldPerson()
    waiting: list[CallToolResult] = []
    refused: list[CallToolResult] = []
    subject = f"Seating plan {uuid.uuid4().hex[:8]}"
    register_all([subject])

    def arguments() -> dict[str, Any]:
        return {
            "account": "work",
            "to": ["guest@example.net"],
            "subject": subject,
            "plainTextBody": "The long table goes by the window.\n",
            "idempotencyKey": uuid.uuid4().hex,
        }

    async def run() -> None:
        headers = {"Authorization": f"Bearer {KEYS['asks']}"}
        timeout = httpx2.Timeout(30, read=None)
        async with contextlib.AsyncExitStack() as stack:
            clients = []
            for url in _direct(replicated):
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(headers=headers, timeout=timeout)
                )
                clients.append(
                    await stack.enter_async_context(
                        Client(
                            streamable_http_client(url, http_client=http),
                            mode="legacy",
                            elicitation_callback=person,
                        )
                    )
                )
            group = await stack.enter_async_context(anyio.create_task_group())

            async def send(client: Client, into: list[CallToolResult]) -> None:
                into.append(await client.call_tool("send_email", arguments()))

            for n in range(QUESTIONS_WAITING):
                group.start_soon(send, clients[n % 2], waiting)
            await until(lambda: len(person.asked) == QUESTIONS_WAITING, "every question was put")
            with anyio.fail_after(30):
                for client in clients:
                    await send(client, refused)
            person.release()

    anyio.run(run)
    assert [code(r) for r in refused] == [59006, 59006]
    assert [structured(r)["status"] for r in waiting] == ["cancelled"] * QUESTIONS_WAITING
    assert len(person.asked) == QUESTIONS_WAITING


def _headers(key: str, session_id: str | None = None) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {KEYS[key]}",
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": HANDSHAKE,
    }
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    return headers


def _initialize(http: httpx2.Client, url: str, key: str) -> httpx2.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE,
            "capabilities": {},
            "clientInfo": {"name": "replica-test", "version": "1"},
        },
    }
    headers = _headers(key)
    del headers["MCP-Protocol-Version"]
    return http.post(url, json=body, headers=headers)


def _list_tools(http: httpx2.Client, url: str, key: str, session_id: str) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    return http.post(url, json=body, headers=_headers(key, session_id))


def _delete(http: httpx2.Client, url: str, key: str, session_id: str) -> httpx2.Response:
    return http.delete(url, headers=_headers(key, session_id))


def test_the_session_bound_per_caller_counts_sessions_on_both_replicas(
    replicated: Replicated,
) -> None:
    first, second = _direct(replicated)
    with httpx2.Client(timeout=30) as http:
        opened = [_initialize(http, url, "bounded") for url in (first, second)]
        assert [r.status_code for r in opened] == [200] * SESSIONS_PER_CALLER
        refused = [_initialize(http, url, "bounded") for url in (first, second, replicated.url)]
        assert [r.status_code for r in refused] == [429, 429, 429]
        assert all(int(r.headers["Retry-After"]) >= 1 for r in refused)
        assert _initialize(http, replicated.url, "plain").status_code == 200
        closed = opened[0].headers["mcp-session-id"]
        assert _delete(http, second, "bounded", closed).status_code == 200
        assert _initialize(http, first, "bounded").status_code == 200
        assert _initialize(http, second, "bounded").status_code == 429


def test_a_session_is_served_by_both_replicas_and_refused_to_anyone_else(
    replicated: Replicated,
) -> None:
    direct = _direct(replicated)
    with httpx2.Client(timeout=30) as http:
        opened = _initialize(http, replicated.url, "asks")
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
        served = [_list_tools(http, url, "asks", session_id) for url in direct]
        assert [r.status_code for r in served] == [200, 200]
        assert all('"tools"' in r.text for r in served)
        other = [_list_tools(http, url, "plain", session_id) for url in direct]
        made_up = [_list_tools(http, url, "asks", uuid.uuid4().hex) for url in direct]
        assert [r.status_code for r in other + made_up] == [404] * 4
        assert {r.json()["error"]["message"] for r in other + made_up} == {"Session not found"}
        assert _delete(http, direct[1], "asks", session_id).status_code == 200
        gone = [_list_tools(http, url, "asks", session_id) for url in direct]
        assert [r.status_code for r in gone] == [404, 404]
