"""Reading the client configurations back out of what a command printed, as a person copying
them from the terminal would: a titled line, or a title followed by a JSON block."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

HTTP_TITLE = "Claude Code (.mcp.json) and Cursor (~/.cursor/mcp.json), over HTTP"
CLAUDE_TITLE = "Claude Code, from a shell"
VSCODE_TITLE = "VS Code (.vscode/mcp.json), over HTTP"
STDIO_TITLE = "Over stdio (the client starts the server itself)"


def printed_sections(output: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    lines = output.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.endswith(":") and index + 1 < len(lines) and lines[index + 1] == "{":
            end = lines.index("}", index + 1)
            sections[line[:-1]] = "\n".join(lines[index + 1 : end + 1])
            index = end + 1
            continue
        title, sep, value = line.partition(": ")
        if sep and title and not title.startswith(" "):
            sections.setdefault(title, value)
        index += 1
    return sections


@dataclass(frozen=True)
class PrintedSnippets:
    http: dict[str, Any]
    vscode: dict[str, Any]
    stdio: dict[str, Any]
    claude: list[str]

    @classmethod
    def parse(cls, output: str) -> PrintedSnippets:
        sections = printed_sections(output)
        return cls(
            http=json.loads(sections[HTTP_TITLE]),
            vscode=json.loads(sections[VSCODE_TITLE]),
            stdio=json.loads(sections[STDIO_TITLE]),
            claude=shlex.split(sections[CLAUDE_TITLE]),
        )

    def claude_url_and_header(self) -> tuple[str, str]:
        """The URL and the header of the `claude mcp add --transport http NAME URL --header
        H` line."""
        words = self.claude
        assert words[:5] == ["claude", "mcp", "add", "--transport", "http"]
        header = words[words.index("--header") + 1]
        return words[6], header

    def http_url_and_headers(self) -> tuple[str, dict[str, str]]:
        (entry,) = self.http["mcpServers"].values()
        assert entry["type"] == "http"
        return entry["url"], dict(entry["headers"])
