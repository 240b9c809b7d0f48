"""Console keys over real HTTP: `mailfathom serve` with the console beside the MCP endpoint,
the official MCP client in both protocol generations. A key created in the console calls a
tool as its entry; revoked in the console, its next call is refused with 401
`invalid_token`, an open session's next call included; the recent-calls page lists the
calls made (tool, caller, outcome, code) and none of their arguments."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio.to_thread
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import log_audit
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.adapters.sql.engine import create_store_engine, sqlite_url
from mcp_tests.client import UNKNOWN_TOOL, call, code, refusal, tool_names
from mcp_tests.hardened import initialize
from mcp_tests.in_process import MODES
from waiting import wait_for

from .served_keys import Owner, Served, served_with_console

READ_TOOLS = {"list_accounts", "list_emails", "get_email_content", "search_emails"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with served_with_console(tmp_path_factory.mktemp("keys-served")) as running:
        yield running


@pytest.fixture
def owner(served: Served) -> Iterator[Owner]:
    signed_in = Owner(served)
    yield signed_in
    signed_in.close()


def _refusal(url: str, key: str) -> httpx2.Response:
    with httpx2.Client(timeout=30) as http:
        return initialize(http, url, key)


def _is_invalid_token(answer: httpx2.Response) -> bool:
    challenge = answer.headers.get("www-authenticate", "")
    return answer.status_code == 401 and challenge.startswith('Bearer error="invalid_token"')


@pytest.mark.parametrize("mode", MODES)
def test_a_console_key_is_refused_from_the_call_after_its_revocation(
    served: Served, owner: Owner, mode: str
) -> None:
    key = owner.create_key("reader")
    assert set(tool_names(served.mcp_url, key, mode=mode)) == READ_TOOLS
    assert code(call(served.mcp_url, key, "list_accounts", mode=mode)) is None
    answers: list[httpx2.Response] = []

    async def record(response: httpx2.Response) -> None:
        answers.append(response)

    async def open_then_revoked() -> None:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
            event_hooks={"response": [record]},
        )
        async with (
            http,
            Client(streamable_http_client(served.mcp_url, http_client=http), mode=mode) as client,
        ):
            assert not (await client.call_tool("list_accounts", {})).is_error
            await anyio.to_thread.run_sync(owner.revoke, key)
            answers.clear()
            with pytest.raises(MCPError):
                await client.call_tool("list_accounts", {})
            assert answers
            assert _is_invalid_token(answers[0])

    anyio.run(open_then_revoked)
    assert _is_invalid_token(_refusal(served.mcp_url, key))
    # Another key of the same entry still admits.
    other = owner.create_key("reader")
    assert code(call(served.mcp_url, other, "list_accounts", mode=mode)) is None


def test_the_calls_page_lists_the_calls_made_and_none_of_their_arguments(
    served: Served, owner: Owner
) -> None:
    key = owner.create_key("reader")
    marker = "marker-" + uuid.uuid4().hex
    log_audit.register(marker)

    def rows() -> dict[str, tuple[str, ...]]:
        tree = owner.page("/calls?caller=reader")
        return {
            str(r.get("id")): tuple(
                r.xpath(f".//td[@class='{k}']")[0].text_content()
                for k in ("tool", "caller", "outcome", "code")
            )
            for r in tree.xpath("//table[@id='calls']/tbody/tr")
        }

    # The module's other tests call as "reader" on the same server: only rows that were not
    # listed before these calls count.
    before = set(rows())
    assert code(call(served.mcp_url, key, "list_accounts")) is None
    refused = call(served.mcp_url, key, "list_emails", {"account": "notes", marker: marker})
    assert code(refused) == 51017
    assert refusal(served.mcp_url, key, "send_email", {"subject": marker}) == UNKNOWN_TOOL
    assert refusal(served.mcp_url, key, marker, {"query": marker}) == UNKNOWN_TOOL
    expected: Counter[tuple[str, ...]] = Counter(
        [
            ("unrecognized", "reader", "Unknown tool", ""),
            ("send_email", "reader", "Unknown tool", ""),
            ("list_emails", "reader", "Refused", "51017"),
            ("list_accounts", "reader", "Answered", ""),
        ]
    )

    def listed() -> bool:
        # Each record is written off the event loop a moment after its call.
        new = Counter(row for row_id, row in rows().items() if row_id not in before)
        return not expected - new

    wait_for(listed, "the calls were listed", timeout=20)
    page = owner.http.get("/calls").text
    assert marker not in page
    assert marker not in served.log.read_text("utf-8", errors="replace")


def test_a_store_that_fails_never_fails_a_call_and_is_logged_by_code_alone(
    tmp_path: Path,
) -> None:
    with served_with_console(tmp_path) as running:
        owner = Owner(running)
        key = owner.create_key("reader")
        owner.close()
        engine = create_store_engine(sqlite_url(load_config(running.config).store.sqlite_path))
        try:
            with engine.begin() as connection:
                connection.exec_driver_sql("DROP TABLE console_tool_calls")
            assert code(call(running.mcp_url, key, "list_accounts")) is None

            def logged() -> str | None:
                text = running.log.read_text("utf-8", errors="replace")
                return text if "tool.call_not_recorded" in text else None

            said = wait_for(logged, "the failed record was logged", timeout=20)
            (line,) = [x for x in said.splitlines() if "tool.call_not_recorded" in x]
            assert '"code": 54001' in line
            assert "console_tool_calls" not in said

            with engine.begin() as connection:
                connection.exec_driver_sql("DROP TABLE console_api_keys")
            with httpx2.Client(timeout=30) as http:
                answer = initialize(http, running.mcp_url, key)
            assert answer.status_code == 503
            said = running.log.read_text("utf-8", errors="replace")
            (line,) = [x for x in said.splitlines() if "mcp.console_key_unchecked" in x]
            assert '"code": 54001' in line
            assert "console_api_keys" not in said
        finally:
            engine.dispose()
