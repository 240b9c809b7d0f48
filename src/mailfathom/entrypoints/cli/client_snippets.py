"""Client configurations printed for a deployment, ready to paste.

One place builds them for every command that prints them (`demo`, `init`), so a change in
what clients read is made once. The shapes are the ones the clients document:

- an `mcpServers` entry with `"type": "http"`, the URL and an `Authorization: Bearer` header
  (Claude Code's `.mcp.json`, Cursor's `~/.cursor/mcp.json`, and the MCP Inspector's
  `--config` file all read it; without `type` some of them take the entry for a command);
- the `claude mcp add --transport http NAME URL --header "Authorization: Bearer KEY"` line;
- VS Code's `.vscode/mcp.json`, whose top-level key is `servers`;
- over stdio, an `mcpServers` entry whose `command` is the absolute path of this very
  program, so a desktop client that starts it does not depend on its own `PATH`.

Everything is printed without wrapping, markup or highlighting: a line a terminal folds, or
a key rich decorates, no longer works when pasted.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ClientSnippets:
    """What a caller needs to reach one deployment, in each client's own shape."""

    name: str
    url: str
    api_key: str
    config_path: Path

    @property
    def authorization(self) -> str:
        return f"Bearer {self.api_key}"

    def _http_entry(self) -> JsonObject:
        return {"type": "http", "url": self.url, "headers": {"Authorization": self.authorization}}

    def http_config(self) -> JsonObject:
        """`mcpServers`, as Claude Code's `.mcp.json` and Cursor's `mcp.json` read it."""
        return {"mcpServers": {self.name: self._http_entry()}}

    def vscode_config(self) -> JsonObject:
        """VS Code's `.vscode/mcp.json`: the same entry under `servers`."""
        return {"servers": {self.name: self._http_entry()}}

    def claude_command(self) -> str:
        words = ["claude", "mcp", "add", "--transport", "http", self.name, self.url]
        words += ["--header", f"Authorization: {self.authorization}"]
        return shlex.join(words)

    def stdio_config(self) -> JsonObject:
        command, args = program_command()
        args = [*args, "serve", "--stdio", "--config", str(self.config_path)]
        return {"mcpServers": {self.name: {"command": command, "args": args}}}


def program_command(
    executable: str | None = None, exists: Any = os.access
) -> tuple[str, list[str]]:
    """The absolute command that runs this program: the `mailfathom` entry point installed
    beside the running interpreter, or else the interpreter with `-m mailfathom`.

    The interpreter's path is made absolute but not resolved: in a virtual environment
    `bin/python` is a link to the base interpreter, which does not see the environment's
    packages."""
    interpreter = os.path.abspath(executable or sys.executable)
    script = os.path.join(os.path.dirname(interpreter), "mailfathom")
    if exists(script, os.X_OK):
        return script, []
    return interpreter, ["-m", "mailfathom"]


def _json(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2)


def render(snippets: ClientSnippets) -> list[tuple[str, str]]:
    """Each snippet with the line that introduces it, in printing order."""
    return [
        ("MCP endpoint", snippets.url),
        ("API key", snippets.api_key),
        (
            "Claude Code (.mcp.json) and Cursor (~/.cursor/mcp.json), over HTTP",
            _json(snippets.http_config()),
        ),
        ("Claude Code, from a shell", snippets.claude_command()),
        ("VS Code (.vscode/mcp.json), over HTTP", _json(snippets.vscode_config())),
        (
            "Over stdio (the client starts the server itself)",
            _json(snippets.stdio_config()),
        ),
    ]


def print_snippets(console: Console, snippets: ClientSnippets) -> None:
    for title, text in render(snippets):
        for line in _lines(title, text):
            console.print(line, markup=False, highlight=False, soft_wrap=True)


def _lines(title: str, text: str) -> Sequence[str]:
    if "\n" not in text:
        return [f"{title}: {text}"]
    return [f"{title}:", text]
