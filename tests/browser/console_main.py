"""Serves the owner's console on a loopback port for the browser tests:
`python console_main.py ROOT PORT`, the owner password on standard input.

The console's own application (`build_console_app`) over a deployment of a local account in
an SQLite store under ROOT, with the password set through the console's own use case.
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

from mailfathom.bootstrap import Services
from mailfathom.domain.config import (
    AccountConfig,
    AccountKind,
    DeploymentConfig,
    FolderMapping,
    StoreConfig,
)
from mailfathom.domain.console import ConsoleConfig
from mailfathom.entrypoints.console.pages import build_console_app
from mailfathom.entrypoints.console.serving import console_use_cases


def main(root: Path, port: int) -> None:
    password = sys.stdin.readline().rstrip("\n")
    account = AccountConfig(
        account_id="work",
        display_name="Work",
        kind=AccountKind.LOCAL,
        folders=(FolderMapping("INBOX", "INBOX"),),
    )
    config = DeploymentConfig(
        store=StoreConfig(data_dir=root / "data"),
        accounts=(account,),
        console=ConsoleConfig(enabled=True, host="127.0.0.1", port=port),
    )
    with Services.open(config) as services:
        services.console_access().set_password(password)
        app = build_console_app(console_use_cases(services), "127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
