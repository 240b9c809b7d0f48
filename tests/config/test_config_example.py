"""The sample configuration shipped in docs/ stays valid."""

from __future__ import annotations

from pathlib import Path

from mailfathom.adapters.config import load_config
from mailfathom.domain.config import AccountKind, SecretRef, SyncMode, TlsMode
from mailfathom.domain.content_storage import ContentStoreKind
from mailfathom.domain.embedding_profiles import EndpointProfile, PackageModel, PackageProfile
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.oauth import ConnectionAuth, OAuthProvider

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_example_configuration_loads() -> None:
    path = DOCS / "mailfathom.example.toml"
    config = load_config(path)

    assert config.store.data_dir == path.resolve().parent / "data"
    assert config.store.database_url is None
    assert config.store.content_store is ContentStoreKind.PACKS
    assert [account.account_id for account in config.accounts] == [
        "work",
        "personal",
        "gmail",
        "notes",
    ]

    work, personal, gmail, notes = config.accounts
    assert work.sync_mode is SyncMode.PUSH
    assert work.imap is not None
    assert work.imap.secret == SecretRef(env="WORK_IMAP_PASSWORD")
    assert [folder.role for folder in work.folders] == [
        FolderRole.INBOX,
        FolderRole.SENT,
        FolderRole.JUNK,
    ]
    assert work.folders[2].visible_to_tools is False

    assert personal.imap is not None
    assert personal.imap.tls is TlsMode.STARTTLS
    assert personal.imap.port == 143
    assert personal.imap.secret == SecretRef(file=Path("/run/secrets/personal-imap"))

    assert gmail.imap is not None
    assert gmail.imap.auth is ConnectionAuth.OAUTH2
    assert gmail.oauth is not None
    assert gmail.oauth.provider is OAuthProvider.GMAIL
    assert gmail.delivery is not None
    assert gmail.delivery.smtp is not None
    assert gmail.delivery.smtp.auth is ConnectionAuth.OAUTH2

    assert notes.kind is AccountKind.LOCAL
    assert notes.imap is None

    local, ollama = config.embeddings.profiles
    assert config.embeddings.active == local
    assert isinstance(local, PackageProfile)
    assert local.model is PackageModel.MINILM_INT8
    assert isinstance(ollama, EndpointProfile)
    assert ollama.url == "http://127.0.0.1:11434/v1"


def test_the_example_in_the_configuration_reference_loads(tmp_path: Path) -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    example = text.split("## Complete example", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "mailfathom.toml"
    path.write_text(example, encoding="utf-8")
    config = load_config(path)
    assert [account.account_id for account in config.accounts] == ["work", "notes"]
    assert [profile.name for profile in config.embeddings.profiles] == ["local", "ollama"]


def test_the_commented_endpoint_of_the_example_loads_once_uncommented(tmp_path: Path) -> None:
    text = (DOCS / "mailfathom.example.toml").read_text(encoding="utf-8")
    block = text.split("# [McpEndpoint]\n", 1)[1]
    uncommented = "\n".join(line.removeprefix("# ").removeprefix("#") for line in block.split("\n"))
    path = tmp_path / "mailfathom.toml"
    path.write_text(
        text.split("# The MCP endpoint", 1)[0] + "[McpEndpoint]\n" + uncommented, encoding="utf-8"
    )
    endpoint = load_config(path).mcp
    assert endpoint.oauth is not None
    assert endpoint.oauth.resource == "https://mail.example.org/mcp"
    assert [c.name for c in endpoint.callers if c.oauth is not None] == ["assistant"]
