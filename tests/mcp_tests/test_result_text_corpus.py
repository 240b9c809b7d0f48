"""Result text on real mail: corpus messages in a local account, served over stdio.

Every answer of every reading tool over a few hundred third-party messages (mailing-list
threads, signed and encrypted mail, parser regressions) must validate against its output
schema, expand back into its structuredContent from the schema alone, and carry a likelihood
of 0 beside notAssessed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.types import CallToolResult

from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.client import over_stdio, text
from mcp_tests.result_text import authorship_readings, expand

# (folder, corpus directory, how many files at most, in name order)
SOURCES = [
    ("INBOX", "spamassassin-easy-ham-1", 150),
    ("Archive", "linux-mips-2005", 250),
    ("INBOX", "mu/testdata", 60),
    ("INBOX", "python-stdlib", 60),
]
MAILDIR = {"cur", "new"}
QUERIES = ["kernel patch", "linux", "razor", "encrypted", "the"]


@dataclass(frozen=True)
class Store:
    config: Path
    log: Path
    messages: int


def _message_files(root: Path, limit: int) -> list[Path]:
    """A Maildir's messages (in cur/ and new/), or else the files directly in `root`."""
    in_maildir = sorted(p for p in root.rglob("*") if p.is_file() and p.parent.name in MAILDIR)
    files = in_maildir or sorted(p for p in root.iterdir() if p.is_file())
    return files[:limit]


def _write_maildir(maildir: Path, corpora: Path) -> int:
    count = 0
    for folder in ("INBOX", "Archive", "Junk"):
        for sub in ("cur", "new", "tmp"):
            (maildir / folder / sub).mkdir(parents=True, exist_ok=True)
    for folder, corpus, limit in SOURCES:
        for path in _message_files(corpora / "messages" / corpus, limit):
            raw = path.read_bytes()
            if raw.startswith(b"From "):
                raw = raw.split(b"\n", 1)[1]
            count += 1
            target = maildir / folder / "cur" / f"{1_100_000_000 + count}.M{count}.corpus:2,S"
            target.write_bytes(raw)
    return count


@pytest.fixture(scope="module")
def corpus_store(corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("corpus-text")
    data = root / "data"
    count = _write_maildir(data / "local" / "corpus", corpora)
    folders = "".join(
        f'\n[[Accounts.Folders]]\nRemote = "{name}"\nAlias = "{name}"\nRole = "{role}"\n'
        for name, role in (("INBOX", "Inbox"), ("Archive", "Archive"), ("Junk", "Junk"))
    )
    digest = hashlib.sha256(os.urandom(16)).hexdigest()
    config = root / "mailfathom.toml"
    config.write_text(
        f'[Store]\nDataDir = "{data}"\n\n[[Accounts]]\nId = "corpus"\n'
        f'DisplayName = "Corpus mailbox"\nKind = "local"\nAddresses = ["owner@example.org"]\n'
        f'{folders}\n[McpEndpoint]\nEnabled = true\nListen = "127.0.0.1:8626"\n\n'
        f'[[McpEndpoint.Callers]]\nName = "agent"\nCredential = "apiKey"\n'
        f'ApiKeySha256 = "{digest}"\n',
        "utf-8",
    )
    loaded = load_config(config)
    with Services.open(loaded) as services:
        services.account_synchronizer().run_once(loaded.accounts[0])
    return Store(config, root / "stdio.log", count)


async def _every_answer(client: Client) -> list[tuple[str, CallToolResult]]:
    answers: list[tuple[str, CallToolResult]] = [
        ("list_accounts", await client.call_tool("list_accounts", {}))
    ]
    ids: list[str] = []
    threads: list[str] = []
    arguments: dict[str, Any] = {"pageSize": 20, "includeJunkMail": True}
    while True:
        page = await client.call_tool("list_emails", arguments)
        answers.append(("list_emails", page))
        content = page.structured_content or {}
        ids.extend(e["storedEmailId"] for e in content["emails"])
        threads.extend(e["threadId"] for e in content["emails"] if e["threadId"])
        if not content["nextCursor"]:
            break
        arguments = {**arguments, "cursor": content["nextCursor"]}
    for query in QUERIES:
        found = await client.call_tool("search_emails", {"queryText": query, "resultLimit": 20})
        answers.append(("search_emails", found))
    for start in range(0, len(ids), 10):
        chosen = ids[start : start + 10]
        read = await client.call_tool(
            "get_email_content", {"storedEmailIds": chosen, "includeSanitizedHtml": True}
        )
        answers.append(("get_email_content", read))
    for thread in sorted(set(threads))[:15]:
        read = await client.call_tool("get_email_content", {"threadId": thread})
        answers.append(("get_email_content", read))
    return answers


@pytest.mark.soak
def test_every_answer_on_corpus_mail_expands_to_its_validated_structure(
    corpus_store: Store,
) -> None:
    async def work(client: Client) -> tuple[dict[str, Any], list[tuple[str, CallToolResult]]]:
        listed = await client.list_tools()
        schemas = {t.name: t.output_schema for t in listed.tools}
        return schemas, await _every_answer(client)

    schemas, answers = over_stdio(corpus_store.config, dict(os.environ), work, corpus_store.log)
    summaries = 0
    text_total = full_total = 0
    for tool, result in answers:
        assert not result.is_error, (tool, text(result)[:40])
        schema = schemas[tool]
        structured = result.structured_content
        assert isinstance(structured, dict)
        jsonschema.validate(structured, schema)
        written = text(result)
        assert expand(schema, json.loads(written)) == structured, tool
        for reading in authorship_readings(structured):
            if reading["state"] == "notAssessed":
                assert reading["likelihood"] == 0
        if tool == "list_emails":
            summaries += len(structured["emails"])
            text_total += len(written)
            full_total += len(json.dumps(structured, separators=(",", ":"), ensure_ascii=False))
    assert summaries == corpus_store.messages
    assert text_total * 2 < full_total
