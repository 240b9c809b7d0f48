"""The deployment's configuration, as values.

Loading and validating the TOML file is an adapter's job (`adapters/config`); these types are
what every other layer receives. A secret never appears here: only a reference saying where
to read it from at the moment a connection needs it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from mailfathom.domain.access import ConfirmationMode, Permission, ToolCategory
from mailfathom.domain.answering import AnsweringConfig
from mailfathom.domain.connections import SecretRef, TlsMode
from mailfathom.domain.console import ConsoleConfig
from mailfathom.domain.content_storage import ContentStoreKind, ObjectStoreConfig
from mailfathom.domain.delivery_config import AccountDelivery, MailDeliveryConfig
from mailfathom.domain.download_links import DownloadsConfig
from mailfathom.domain.embedding_profiles import EmbeddingsConfig
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.mcp_oauth import McpOAuthConfig, OAuthSubject
from mailfathom.domain.oauth import ConnectionAuth, OAuthCredential
from mailfathom.domain.operations import OperationsConfig
from mailfathom.domain.sensitive_content import SensitiveContentConfig

__all__ = ["SecretRef", "TlsMode"]


class AccountKind(enum.Enum):
    IMAP = "imap"
    LOCAL = "local"


class RemoteImages(enum.Enum):
    """Whether the sanitized HTML of an account's mail keeps images that load from
    elsewhere (which tells their sender the mail was read) or shows a marker instead."""

    BLOCK = "block"
    ALLOW = "allow"


class SyncMode(enum.Enum):
    POLLING = "polling"
    PUSH = "push"


@dataclass(frozen=True, slots=True)
class ImapConnection:
    """An account's IMAP server. `secret` is the password where `auth` is `PASSWORD`, and
    None where it is `OAUTH2`: the account's `OAuthCredential` then supplies access tokens."""

    host: str
    port: int
    username: str
    secret: SecretRef | None
    tls: TlsMode = TlsMode.IMPLICIT
    timeout_seconds: float = 60.0
    auth: ConnectionAuth = ConnectionAuth.PASSWORD


@dataclass(frozen=True, slots=True)
class FolderMapping:
    """One remote folder this deployment keeps a copy of.

    `remote_name` is the server's name for it (for a local account: the local folder name),
    `alias` the name MailFathom publishes it under.
    """

    remote_name: str
    alias: str
    role: FolderRole | None = None
    visible_to_tools: bool = True


@dataclass(frozen=True, slots=True)
class AccountConfig:
    account_id: str
    display_name: str
    kind: AccountKind
    folders: tuple[FolderMapping, ...]
    imap: ImapConnection | None = None
    sync_mode: SyncMode = SyncMode.POLLING
    poll_interval_seconds: float = 300.0
    max_message_octets: int = 50 * 1024 * 1024
    storage_ceiling_octets: int | None = None
    addresses: tuple[str, ...] = ()
    delivery: AccountDelivery | None = None
    # Whether synchronizing the account puts the people its mail names in the contact book.
    collect_contacts: bool = True
    remote_images: RemoteImages = RemoteImages.BLOCK
    # The authserv-ids (RFC 8601) of the receiving servers whose Authentication-Results this
    # account's mail is judged by, lower-cased; empty trusts none and verifies DKIM locally.
    trusted_authserv_ids: frozenset[str] = frozenset()
    # The OAuth block an IMAP or submission connection with `auth = OAUTH2` logs in with.
    oauth: OAuthCredential | None = None

    def own_addresses(self) -> frozenset[str]:
        """Every address this account receives or sends as, lower-cased: its `Addresses`,
        its `Delivery.Address`, and its IMAP login name when that is an address."""
        found = {a.lower() for a in self.addresses}
        if self.delivery is not None and self.delivery.address is not None:
            found.add(self.delivery.address.lower())
        if self.imap is not None and _is_address(self.imap.username):
            found.add(self.imap.username.lower())
        return frozenset(found)


def _is_address(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    return bool(at and local and domain) and not any(ch.isspace() for ch in text)


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Where state lives. `database_url` None means the embedded SQLite file under `data_dir`.

    `database_url` never carries a password; when the database needs one,
    `database_password_secret` says where to read it. Message content goes to packs under
    `content_dir`, or to `object_store` when `content_store` says S3.
    """

    data_dir: Path
    database_url: str | None = None
    database_password_secret: SecretRef | None = None
    content_store: ContentStoreKind = ContentStoreKind.PACKS
    object_store: ObjectStoreConfig | None = None
    # PostgreSQL: hash partitions per large table, applied to a new database (0: none).
    partitions: int = 0

    @property
    def content_dir(self) -> Path:
        return self.data_dir / "content"

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "mailfathom.sqlite3"


@dataclass(frozen=True, slots=True)
class SyncConfig:
    enabled: bool = True
    batch_messages: int = 500
    batch_octets: int = 4 * 1024 * 1024
    # How long a worker's claim on an account lasts without renewal (renewed every third of
    # it): a worker killed without giving its accounts up leaves them to others after this.
    lease_seconds: float = 30.0


@dataclass(frozen=True, slots=True)
class MachineAuthorshipConfig:
    """`[MachineAuthorship]`: whether synchronization reads how much each stored message's text
    reads as machine written. Off, every message is stored as not assessed."""

    enabled: bool = True


@dataclass(frozen=True, slots=True)
class SenderVerificationConfig:
    """How synchronization verifies who sent a message where no trusted receiving server
    reported it: the DKIM key lookups' name server (`resolver` None is the system's), the
    deadline of one lookup, the budget of one message, how many signatures one message has
    checked, and the key cache (entries, the longest any answer is kept, and how long an
    answer that no key exists is kept)."""

    enabled: bool = True
    resolver: tuple[str, int] | None = None
    lookup_timeout_seconds: float = 2.0
    message_budget_seconds: float = 5.0
    max_signatures: int = 5
    cache_entries: int = 10_000
    max_cache_ttl_seconds: float = 3600.0
    negative_cache_seconds: float = 300.0


@dataclass(frozen=True, slots=True)
class SenderTrustConfig:
    """`[SenderTrust]`: the authors this deployment trusts once they are authenticated.
    Addresses lower-cased; domains as written (compared in ASCII, case-insensitively)."""

    trusted_senders: tuple[str, ...] = ()
    trusted_domains: tuple[str, ...] = ()


DEFAULT_AUTHSERV_ID = "mailfathom.invalid"
"""The authserv-id this deployment writes its own `Authentication-Results` under where the
configuration names none: under `.invalid` (RFC 6761), so no real server can own it."""


@dataclass(frozen=True, slots=True)
class DeploymentConfig:
    store: StoreConfig
    accounts: tuple[AccountConfig, ...]
    sync: SyncConfig = field(default_factory=SyncConfig)
    mcp: McpEndpointConfig = field(default_factory=lambda: McpEndpointConfig())
    read_only: bool = False
    authserv_id: str = DEFAULT_AUTHSERV_ID
    mail_delivery: MailDeliveryConfig = field(default_factory=MailDeliveryConfig)
    downloads: DownloadsConfig = field(default_factory=DownloadsConfig)
    machine_authorship: MachineAuthorshipConfig = field(default_factory=MachineAuthorshipConfig)
    sender_verification: SenderVerificationConfig = field(default_factory=SenderVerificationConfig)
    sender_trust: SenderTrustConfig = field(default_factory=SenderTrustConfig)
    sensitive_content: SensitiveContentConfig = field(default_factory=SensitiveContentConfig)
    answering: AnsweringConfig = field(default_factory=AnsweringConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)
    operations: OperationsConfig = field(default_factory=OperationsConfig)

    def account(self, account_id: str) -> AccountConfig | None:
        for account in self.accounts:
            if account.account_id == account_id:
                return account
        return None


DEFAULT_MCP_PORT = 8625
DEFAULT_SESSIONS_PER_CALLER = 16
MAX_SERVE_PROCESSES = 64
# Use cases of tool calls running at once in one serving process (see `ToolRegistry`); two
# beat four and forty in calls per second on two cores (docs/benchmarks-throughput.md).
DEFAULT_TOOL_THREADS = 2
MAX_TOOL_THREADS = 64
DEFAULT_SESSION_IDLE_SECONDS = 300.0
DEFAULT_CONFIRMATION_TIMEOUT_SECONDS = 300.0
DEFAULT_QUESTIONS_WAITING_PER_CALLER = 8


@dataclass(frozen=True, slots=True)
class CallerEntry:
    """One way in to the MCP endpoint.

    `api_key_sha256` is the hex SHA-256 of the key a caller presents as a bearer token; the key
    itself is never configured or stored. `oauth` admits the bearer of an access token
    naming that subject instead. With neither, the entry admits callers that present
    nothing, which configuration allows only on a loopback address. `permissions` None
    serves every permission; otherwise exactly the names listed. `confirmation` says
    whether a person is asked before a message this entry's caller composed is sent."""

    name: str
    api_key_sha256: str | None
    permissions: frozenset[Permission] | None = None
    confirmation: ConfirmationMode = ConfirmationMode.NONE
    oauth: OAuthSubject | None = None

    @property
    def is_open(self) -> bool:
        """Whether the entry admits a caller presenting no credential at all."""
        return self.api_key_sha256 is None and self.oauth is None


@dataclass(frozen=True, slots=True)
class McpEndpointConfig:
    """The MCP endpoint. Each caller entry may hold `sessions_per_caller` open sessions of the
    handshake protocol generation at once; a session with no request in flight for
    `session_idle_seconds` is closed. `/metrics` is served only to a bearer key whose SHA-256
    is `metrics_api_key_sha256`, and not at all without one. A person asked to confirm a send
    has `confirmation_timeout_seconds` to answer, and one caller entry may keep
    `questions_waiting_per_caller` such questions waiting within calls held open. `oauth`
    makes the endpoint an OAuth 2.1 resource server beside its API keys. `replicas` says this
    process is one of several serving the same endpoint behind a load balancer: sessions,
    questions in flight and their bounds are then kept in the store, and whatever a client
    carries sealed is sealed under keys derived from `state_secret`, which every replica
    reads (`replicas` requires it). `serve` answers over HTTP in `processes` processes
    sharing one listening socket (more than one needs PostgreSQL); each runs at most
    `tool_threads` calls' use cases at once, calls that wait on a model provider aside."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = DEFAULT_MCP_PORT
    published_categories: frozenset[ToolCategory] | None = None
    callers: tuple[CallerEntry, ...] = ()
    sessions_per_caller: int = DEFAULT_SESSIONS_PER_CALLER
    session_idle_seconds: float = DEFAULT_SESSION_IDLE_SECONDS
    metrics_api_key_sha256: str | None = None
    confirmation_timeout_seconds: float = DEFAULT_CONFIRMATION_TIMEOUT_SECONDS
    questions_waiting_per_caller: int = DEFAULT_QUESTIONS_WAITING_PER_CALLER
    oauth: McpOAuthConfig | None = None
    replicas: bool = False
    state_secret: SecretRef | None = None
    processes: int = 1
    tool_threads: int = DEFAULT_TOOL_THREADS
