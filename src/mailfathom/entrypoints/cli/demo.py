"""The demo: a local deployment with a generated mailbox, synchronized into SQLite."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from mailfathom.bootstrap import Services, load_deployment
from mailfathom.domain.api_keys import API_KEY_PREFIX
from mailfathom.domain.codes import StoreCode
from mailfathom.domain.embedding_profiles import DEFAULT_PACKAGE_MODEL, INSTALLED_WEIGHTS_SHA256
from mailfathom.domain.errors import StoreError
from mailfathom.entrypoints import logs
from mailfathom.entrypoints.cli import serving
from mailfathom.entrypoints.cli.client_snippets import ClientSnippets, print_snippets
from mailfathom.entrypoints.cli.embedding import embed_with_progress
from mailfathom.entrypoints.cli.progress import sync_with_progress
from mailfathom.entrypoints.cli.terminal import status_err

DEMO_CONFIG = """\
# The demo deployment: two local accounts in the embedded SQLite store. They may send to each
# other (peer mailboxes, delivered without a mail server); mail to anybody else has nowhere to
# go and ends as not deliverable. The demo writes this file again on every run, from its
# options: to change more, copy it and use the copy with --config.
[Store]
DataDir = "data"

# Finding mail by meaning with the model installed with MailFathom (docs/embeddings.md).
[Embeddings]
Profile = "{model}"

[[Embeddings.Profiles]]
Name = "{model}"
Kind = "package"
Model = "{model}"
WeightsSha256 = "{weights_sha256}"

[[Accounts]]
Id = "demo"
DisplayName = "Demo mailbox"
Kind = "local"
Addresses = ["owner@example.org"]
PollIntervalSeconds = 2

[Accounts.Delivery]
Enabled = true
Address = "owner@example.org"
DisplayName = "Demo Owner"

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Alias = "Sent"
Role = "Sent"

[[Accounts.Folders]]
Remote = "Archive"
Alias = "Archive"
Role = "Archive"

[[Accounts.Folders]]
Remote = "Junk"
Alias = "Junk"
Role = "Junk"

[[Accounts]]
Id = "colleague"
DisplayName = "Colleague's mailbox"
Kind = "local"
Addresses = ["colleague@example.org"]
PollIntervalSeconds = 2

[Accounts.Delivery]
Enabled = true
Address = "colleague@example.org"
DisplayName = "Demo Colleague"

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Sent"
Alias = "Sent"
Role = "Sent"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:{port}"

# The demo's key is kept in demo-api-key beside this file; only its SHA-256 is configured.
[[McpEndpoint.Callers]]
Name = "demo"
Credential = "apiKey"
ApiKeySha256 = "{key_digest}"
"""

# Written only when the demo is given a chat endpoint: without one, ask_mail is not offered.
ANSWERING = """
# Questions about the mail (ask_mail) are answered by this chat endpoint.
[Answering]
Url = {url}
Model = {model}
"""


@dataclass(frozen=True, slots=True)
class ChatEndpoint:
    """The chat endpoint the demo answers questions with: its base address, the model, and
    the name of the environment variable holding its key (None: no key is sent)."""

    url: str
    model: str
    key_env: str | None = None


def _string(value: str) -> str:
    """A TOML basic string: JSON's string escapes are a subset of TOML's."""
    return json.dumps(value, ensure_ascii=False)


def demo_config(port: int, key_digest: str, chat: ChatEndpoint | None) -> str:
    text = DEMO_CONFIG.format(
        port=port,
        key_digest=key_digest,
        model=DEFAULT_PACKAGE_MODEL.value,
        weights_sha256=INSTALLED_WEIGHTS_SHA256[DEFAULT_PACKAGE_MODEL],
    )
    if chat is None:
        return text
    text += ANSWERING.format(url=_string(chat.url), model=_string(chat.model))
    if chat.key_env is not None:
        text += f"ApiKey = {{ Env = {_string(chat.key_env)} }}\n"
    return text


def _demo_key(data_dir: Path) -> str:
    path = data_dir / "demo-api-key"
    if path.exists():
        return path.read_text("ascii").strip()
    key = API_KEY_PREFIX + "demo-" + secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key


def run(
    data_dir: Path,
    messages: int,
    console: Console,
    *,
    serve: bool,
    port: int,
    chat: ChatEndpoint | None = None,
) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        data_dir = data_dir.resolve()
        config_path = data_dir / "mailfathom.toml"
        key = _demo_key(data_dir)
        digest = hashlib.sha256(key.encode()).hexdigest()
        config_path.write_text(demo_config(port, digest, chat), "utf-8")
    except OSError:
        raise StoreError(
            "The demo's --data-dir cannot be created or written (not permitted, or a file is "
            "in the way).",
            code=int(StoreCode.DATA_DIR_NOT_WRITABLE),
        ) from None
    config = load_deployment(config_path)
    # On a terminal, log lines go to the demo's data directory: none interrupts the banner.
    logs.use_data_dir(config.store.data_dir, status_err)
    with Services.open(config) as services:
        account = config.accounts[0]
        marker = data_dir / ".generated"
        if not marker.exists():
            services.deliver_sample_mail(account.account_id, messages)
            marker.write_text(str(messages), "ascii")
            console.print(f"Generated {messages} messages in {data_dir / 'data' / 'local'}")
        for each in config.accounts:
            sync_with_progress(services, each, console)
        embed_with_progress(services, console)
        summary = services.maintenance().overview.summary(account.account_id)
        table = Table("folder", "messages", "conversations", "with attachments", "unread")
        for row in summary:
            table.add_row(*(str(v) for v in row))
        console.print(table)
        console.print(
            f"Store: {config.store.sqlite_path}\n"
            f"Configuration: {config_path} (use it with --config for the other commands)"
        )
        url = f"http://127.0.0.1:{config.mcp.port}/mcp"
        print_snippets(console, ClientSnippets("mailfathom-demo", url, key, config_path))
        if chat is None:
            console.print(
                "ask_mail is not offered: the demo names no chat endpoint (--chat-url and "
                "--chat-model; see the README for a local Ollama)."
            )
        else:
            console.print(
                f"ask_mail answers with the model {chat.model} at {chat.url}.", highlight=False
            )
        if serve:
            console.print(
                "Sending works between the two demo accounts (owner@example.org and "
                "colleague@example.org); both are synchronized every 2 seconds while serving."
            )
            plan = serving.prepare(config, stdio=False, sync=True, deliver=True)
            serving.run(services, plan, console, stdio=False)
