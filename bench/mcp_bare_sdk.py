"""The MCP SDK alone, as `mcp_throughput.py --baseline` serves it beside `mailfathom serve`.

    uv run python bench/mcp_bare_sdk.py PORT PROCESSES

One `MCPServer` with one tool, `list_accounts`, that answers three fixed accounts as
structured content (about the size of our own answer to that call) and reads nothing: no
store, no admission, no sessions of ours, no middleware. It is served by uvicorn over the
SDK's streamable HTTP app, on PROCESSES processes sharing one listening socket, so that the
same load as ours measures what the SDK and the HTTP server cost per call on this machine:
the floor under any figure of ours.

With `MCP_BARE_ANSWERS` naming a file of answers our server gave to the calls of the mix
(`mcp_throughput.py` records them), the app publishes a tool for each tool name of the mix
instead, each giving back that tool's recorded answers in turn, whatever its arguments: the
SDK and the HTTP server carrying answers of the very sizes the mix's calls get, with no
store, no tool work and no middleware of ours.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

from mcp_types import CallToolResult
from pydantic import BaseModel


class Account(BaseModel):
    id: str
    display_name: str
    addresses: list[str]
    kind: str
    folders: int


class Accounts(BaseModel):
    accounts: list[Account]


FIXED = Accounts(
    accounts=[
        Account(
            id=f"account-{n}",
            display_name=f"Mailbox {n}",
            addresses=[f"account-{n}@example.org"],
            kind="local",
            folders=5,
        )
        for n in range(3)
    ]
)


def app() -> Any:
    """The served app (a factory: each uvicorn process builds its own)."""
    from mcp.server import MCPServer

    server = MCPServer("bare")
    answers = os.environ.get(ANSWERS_ENV)
    if answers:
        _replaying(server, answers)
    else:

        @server.tool(name="list_accounts", description="The accounts (three fixed ones).")
        def list_accounts() -> Accounts:
            return FIXED

    return server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")


ANSWERS_ENV = "MCP_BARE_ANSWERS"


def _replaying(server: Any, path: str) -> None:
    """A tool per tool name in the answers at `path`, each answering its recorded results in
    turn (the arguments a call sends are not part of a tool's schema, so they are ignored)."""
    recorded: dict[str, list[CallToolResult]] = {}
    with open(path, encoding="utf-8") as kept:
        for entry in json.load(kept):
            result = {k: v for k, v in entry["result"].items() if k in _RESULT_FIELDS}
            recorded.setdefault(entry["name"], []).append(CallToolResult.model_validate(result))
    for name, results in recorded.items():
        server.tool(name=name, description=f"Recorded answers of {name}.")(_answering(results))


_RESULT_FIELDS = frozenset({"content", "structuredContent", "isError"})


def _answering(results: list[CallToolResult]) -> Callable[[], CallToolResult]:
    turns: Iterator[CallToolResult] = itertools.cycle(results)

    def answer() -> CallToolResult:
        return next(turns)

    return answer


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("processes", type=int)
    args = parser.parse_args()
    uvicorn.run(
        "mcp_bare_sdk:app",
        factory=True,
        host="127.0.0.1",
        port=args.port,
        workers=args.processes,
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
