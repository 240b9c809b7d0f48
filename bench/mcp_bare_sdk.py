"""The MCP SDK alone, as `mcp_throughput.py --baseline` serves it beside `mailfathom serve`.

    uv run python bench/mcp_bare_sdk.py PORT PROCESSES

One `MCPServer` with one tool, `list_accounts`, that answers three fixed accounts as
structured content (about the size of our own answer to that call) and reads nothing: no
store, no admission, no sessions of ours, no middleware. It is served by uvicorn over the
SDK's streamable HTTP app, on PROCESSES processes sharing one listening socket, so that the
same load as ours measures what the SDK and the HTTP server cost per call on this machine:
the floor under any figure of ours.
"""

from __future__ import annotations

import argparse
from typing import Any

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

    @server.tool(name="list_accounts", description="The accounts (three fixed ones).")
    def list_accounts() -> Accounts:
        return FIXED

    return server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")


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
