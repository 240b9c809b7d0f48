"""Sessions of the handshake protocol generation: bounded per caller entry, owned by the entry
that opened them, and closed when idle. One caller filling its share never locks out another."""

from __future__ import annotations

import time

import httpx2

from mcp_tests.client import over_http, tool_names
from mcp_tests.deployment import KEYS
from mcp_tests.hardened import (
    BOUNDED_SESSIONS,
    Served,
    close_session,
    initialize,
    list_tools,
    open_session,
)


def test_a_caller_at_its_session_bound_is_refused_alone(bounded_server: Served) -> None:
    url = bounded_server.url
    with httpx2.Client(timeout=30) as http:
        sessions = [open_session(http, url, KEYS["reader"]) for _ in range(BOUNDED_SESSIONS)]
        try:
            refused = initialize(http, url, KEYS["reader"])
            assert refused.status_code == 429
            assert int(refused.headers["retry-after"]) >= 1
            assert "mcp-session-id" not in refused.headers
            # Another entry opens sessions of the same generation, with the official client.
            listed = over_http(url, KEYS["full"], lambda c: c.list_tools(), mode="legacy").tools
            assert "list_emails" in [t.name for t in listed]
            # The refused caller's open sessions keep working.
            assert list_tools(http, url, KEYS["reader"], sessions[0]).status_code == 200
            # A closed session frees its place.
            assert close_session(http, url, KEYS["reader"], sessions.pop()) == 200
            sessions.append(open_session(http, url, KEYS["reader"]))
            assert initialize(http, url, KEYS["reader"]).status_code == 429
        finally:
            for session in sessions:
                close_session(http, url, KEYS["reader"], session)


def test_the_single_exchange_generation_is_not_counted(bounded_server: Served) -> None:
    url = bounded_server.url
    with httpx2.Client(timeout=30) as http:
        sessions = [open_session(http, url, KEYS["reader"]) for _ in range(BOUNDED_SESSIONS)]
        try:
            assert initialize(http, url, KEYS["reader"]).status_code == 429
            assert "list_emails" in tool_names(url, KEYS["reader"], mode="2026-07-28")
        finally:
            for session in sessions:
                close_session(http, url, KEYS["reader"], session)


def test_a_session_is_refused_to_every_other_credential(bounded_server: Served) -> None:
    url = bounded_server.url
    with httpx2.Client(timeout=30) as http:
        session = open_session(http, url, KEYS["reader"])
        try:
            for other in ("full", "nothing", "sender"):
                foreign = list_tools(http, url, KEYS[other], session)
                assert foreign.status_code == 404
                assert foreign.json()["error"]["code"] == -32600
                assert close_session(http, url, KEYS[other], session) == 404
            assert list_tools(http, url, KEYS["reader"], session).status_code == 200
        finally:
            close_session(http, url, KEYS["reader"], session)


def test_an_idle_session_is_closed_and_frees_its_place(short_idle_server: Served) -> None:
    url = short_idle_server.url
    with httpx2.Client(timeout=30) as http:
        session = open_session(http, url, KEYS["reader"])
        # The bound is one session: while it lives, another is refused.
        assert initialize(http, url, KEYS["reader"]).status_code == 429
        deadline = time.monotonic() + 20
        while True:
            opened = initialize(http, url, KEYS["reader"])
            if opened.status_code == 200:
                break
            assert opened.status_code == 429
            assert time.monotonic() < deadline, "the idle session was never closed"
            time.sleep(0.1)
        replacement = opened.headers["mcp-session-id"]
        assert replacement != session
        assert list_tools(http, url, KEYS["reader"], session).status_code == 404
        close_session(http, url, KEYS["reader"], replacement)
