"""A deployment that embeds its mail through the test model provider, served by
`mailfathom serve` over HTTP and reached with the official MCP client.

One local account holds a few messages about a drainpipe. The provider's vectors are a hashed
bag of words and character trigrams (tests/servers/model_provider_text.py), so it cannot match
a paraphrase sharing no word; what it does match is a word's other forms, which the lexical
index (whole words, no stemming) does not: the query `drainpipe` is a word of one message
only, while two others say `drainpipes`. Those two are found through the vector ranking alone.

The process is restarted with another configuration when a test needs one (no profile, another
profile `Version`), always on the same port and store; `embed` runs `mfctl mailbox embed` as
its own process beside it, as an operator does.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from log_audit import register_all
from mailfathom.adapters.config.toml_loader import load_config
from mailfathom.bootstrap import Services
from mcp_tests.client import call, structured
from mcp_tests.deployment import _free_port, _wait_for_port
from servers.model_provider import DEFAULT_DIMENSION, DEFAULT_EMBEDDING_MODEL, ModelProvider

READER_KEY = "mf-states-reader-" + uuid.uuid4().hex
KEY_ENV = "MF_STATES_EMBEDDING_KEY"
RECHECK_SECONDS = 5
# A profile's request timeout: a provider holding a request longer is unreachable.
TIMEOUT_SECONDS = 1
QUERY = "drainpipe"
T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)

# subject: (folder, sender, body)
MAIL = {
    "Kitchen overflow": (
        "INBOX",
        "plumber@example.org",
        "The drainpipe behind the kitchen overflowed again.",
    ),
    "North wall": (
        "INBOX",
        "landlord@example.org",
        "Both drainpipes on the north wall are blocked.",
    ),
    "Replaced last autumn": ("Archive", "landlord@example.org", "Old drainpipes were replaced."),
    "March invoice": ("INBOX", "billing@example.org", "Your invoice for March is attached."),
    "Hedge cutting": ("INBOX", "landlord@example.org", "The hedge will be cut on Friday."),
    "Friday lunch": ("INBOX", "friend@example.org", "Shall we meet for lunch on Friday?"),
}
# The one message holding the query's word, and those holding only another form of it.
LEXICAL_MATCH = "Kitchen overflow"
BY_MEANING = {"North wall", "Replaced last autumn"}


@dataclass(frozen=True)
class Profile:
    """What `[Embeddings]` declares: the active `openai` profile's `Version` and `Model`."""

    version: str = "1"
    model: str = DEFAULT_EMBEDDING_MODEL
    dimension: int = DEFAULT_DIMENSION

    def section(self, provider: ModelProvider) -> str:
        return f"""
[Embeddings]
Profile = "remote"
RecheckSeconds = {RECHECK_SECONDS}

[[Embeddings.Profiles]]
Name = "remote"
Kind = "openai"
Model = "{self.model}"
Url = "{provider.base_url}"
Dimension = {self.dimension}
Version = "{self.version}"
ApiKey = {{ Env = "{KEY_ENV}" }}
TimeoutSeconds = {TIMEOUT_SECONDS}
"""


def _message(subject: str, sender: str, body: str, sent: datetime) -> bytes:
    m = EmailMessage()
    m["From"] = sender
    m["To"] = "owner@example.net"
    m["Subject"] = subject
    m["Date"] = format_datetime(sent)
    m["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    m.set_content(body)
    return bytes(m)


@dataclass
class SemanticDeployment:
    root: Path
    provider: ModelProvider
    store: str
    port: int = field(default_factory=_free_port)
    profile: Profile | None = None
    _process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def config_path(self) -> Path:
        return self.root / "mailfathom.toml"

    @property
    def server_log(self) -> Path:
        return self.root / "server.log"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, KEY_ENV: self.provider.api_key}

    def _write(self, profile: Profile | None) -> None:
        digest = hashlib.sha256(READER_KEY.encode()).hexdigest()
        embeddings = profile.section(self.provider) if profile is not None else ""
        self.config_path.write_text(
            f"""
[Store]
DataDir = "{self.root / "data"}"
{self.store}

[[Accounts]]
Id = "work"
DisplayName = "Work Mail"
Kind = "local"

[[Accounts.Folders]]
Remote = "INBOX"
Alias = "INBOX"
Role = "Inbox"

[[Accounts.Folders]]
Remote = "Archive"
Alias = "Archive"
Role = "Archive"

[McpEndpoint]
Enabled = true
Listen = "127.0.0.1:8625"

[[McpEndpoint.Callers]]
Name = "reader"
Credential = "apiKey"
ApiKeySha256 = "{digest}"
Permissions = ["mailfathom.mail.read"]
{embeddings}""",
            "utf-8",
        )

    def fill(self) -> None:
        """Deliver the mail and synchronize it once, with no profile (nothing embedded)."""
        register_all(
            [QUERY, *MAIL, *(s for _, s, b in MAIL.values()), *(b for *_, b in MAIL.values())]
        )
        self._write(None)
        config = load_config(self.config_path)
        with Services.open(config) as services:
            for n, (subject, (folder, sender, body)) in enumerate(MAIL.items()):
                sent = T0 + timedelta(minutes=n)
                raw = _message(subject, sender, body, sent)
                services.connectors.local.folder("work", folder).deliver(raw, received_at=sent)
            services.account_synchronizer().run_once(config.accounts[0])

    def serve(self, profile: Profile | None) -> None:
        """`mailfathom serve --no-sync` with `profile` active (None: no profile), restarted
        when it runs with another. Without synchronization nothing but searches and the
        re-check of a failed provider asks the provider anything."""
        if self._process is not None and self._process.poll() is None:
            if profile == self.profile:
                return
            self.stop()
        self._write(profile)
        self.profile = profile
        with self.server_log.open("ab") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "mailfathom", "serve", "--no-sync",
                 "--config", str(self.config_path), "--port", str(self.port)],
                env=self.env,
                stdout=log,
                stderr=log,
            )  # fmt: skip
        _wait_for_port(self.port, self._process)

    def embed(self) -> None:
        """`mfctl mailbox embed`: fill the active profile's generation, beside `serve`."""
        with self.server_log.open("ab") as log:
            done = subprocess.run(
                [sys.executable, "-m", "mailfathom", "mailbox", "embed",
                 "--config", str(self.config_path)],
                env=self.env,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                timeout=120,
            )  # fmt: skip
        assert done.returncode == 0, "mfctl mailbox embed failed"

    def search(self, query: str | None = QUERY, **arguments: Any) -> dict[str, Any]:
        """search_emails for `query` (None: no `queryText`) and `arguments`."""
        if query is not None:
            arguments["queryText"] = query
        return structured(call(self.url, READER_KEY, "search_emails", arguments))

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def modes(found: dict[str, Any]) -> tuple[str, str]:
    """The pair every search answer carries: (`retrievalMode`, `semanticSearch`)."""
    return found["retrievalMode"], found["semanticSearch"]


def subjects(found: dict[str, Any]) -> list[str]:
    return [m["summary"]["subject"] for m in found["matches"]]
