"""The composition root: the one place where configuration becomes connected parts.

Nothing connects at import time; `Services.open` does the work when a command asks for it.
"""

from __future__ import annotations

import gc
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from mailfathom.adapters.answering_lookup import SearchLookup
from mailfathom.adapters.authentication.on_first_use import sender_verifier
from mailfathom.adapters.config.secrets import LoginSecretsOfAccounts
from mailfathom.adapters.config.secrets import NeededSecret as NeededSecret
from mailfathom.adapters.config.secrets import read_secret as read_secret
from mailfathom.adapters.config.secrets import require_secrets as require_secrets
from mailfathom.adapters.config.secrets import secrets_to_deliver as secrets_to_deliver
from mailfathom.adapters.config.secrets import secrets_to_synchronize as secrets_to_synchronize
from mailfathom.adapters.config.toml_loader import load_config

# Re-exported for `mailfathom init`: checking the connections it is given, and writing the
# new configuration.
from mailfathom.adapters.config.toml_writer import InlineTable as InlineTable
from mailfathom.adapters.config.toml_writer import create_config_file as create_config_file
from mailfathom.adapters.config.toml_writer import refuse_existing as refuse_existing
from mailfathom.adapters.console_password import Argon2Passwords
from mailfathom.adapters.content.places import HeldContent, content_place
from mailfathom.adapters.cursor_signing import HmacCursorSigner, SealedCursorSigner, key_from_file
from mailfathom.adapters.download_links import SealedLinks, links_of
from mailfathom.adapters.draft_folders import DraftFolderCopies
from mailfathom.adapters.embedding import OpenEmbedder, open_active_embedder
from mailfathom.adapters.flag_writers import FlagChangeCarrier
from mailfathom.adapters.grant_check import grant_user as grant_user
from mailfathom.adapters.grant_check import try_grant as try_grant
from mailfathom.adapters.html.sanitize import NhHtmlSanitizer
from mailfathom.adapters.imap.probe import list_server_folders as list_server_folders
from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.local.file_roots import LocalFileRoots
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.local.maildir_import import ImportCount as ImportCount
from mailfathom.adapters.local.maildir_import import import_source
from mailfathom.adapters.local.peers import LocalPeerMailboxes
from mailfathom.adapters.local.sample_mail import generate_mailbox
from mailfathom.adapters.mime.attachments import MimeAttachmentReader
from mailfathom.adapters.mime.compose import StdlibComposer
from mailfathom.adapters.mime.viewing import MimeMessageViewer

# Re-exported for granting access to an account that logs in with OAuth (`init --provider`,
# `account consent`): finding the endpoints, asking the person, keeping the refresh token.
from mailfathom.adapters.oauth.discovery import discover as discover
from mailfathom.adapters.oauth.flows import DevicePrompt as DevicePrompt
from mailfathom.adapters.oauth.flows import Grant as Grant
from mailfathom.adapters.oauth.flows import OAuthClient as OAuthClient
from mailfathom.adapters.oauth.flows import device_grant as device_grant
from mailfathom.adapters.oauth.flows import loopback_grant as loopback_grant
from mailfathom.adapters.oauth.grant_files import check_secret_place as check_secret_place
from mailfathom.adapters.oauth.grant_files import create_secret_file as create_secret_file
from mailfathom.adapters.oauth.grant_files import held_refresh_token as held_refresh_token
from mailfathom.adapters.oauth.grant_files import trial_secret_file as trial_secret_file
from mailfathom.adapters.oauth.grant_files import write_over_secret_file as write_over_secret_file
from mailfathom.adapters.oauth.grant_health import GrantHealth
from mailfathom.adapters.oauth.revocation import revoke_refresh_token as revoke_refresh_token
from mailfathom.adapters.oauth.tokens import ConsentOfAccounts, process_tokens

# Re-exported: the secrets a command reads before it starts its workers; the entrypoints
# take them from here, never from the adapters.
from mailfathom.adapters.patterns.re2_patterns import Re2PatternCompiler
from mailfathom.adapters.preparer import MimeMessagePreparer, default_workers
from mailfathom.adapters.sent_folders import SentFolderCopies
from mailfathom.adapters.smtp.probe import check_submission as check_submission
from mailfathom.adapters.smtp.submission import SmtpTransports
from mailfathom.adapters.sql import migrate, partitioning
from mailfathom.adapters.sql.account_health import SqlAccountHealth
from mailfathom.adapters.sql.answering import SqlAnsweringLedger, SqlChatHealth
from mailfathom.adapters.sql.caller_keys import SqlApiKeys, SqlToolCalls
from mailfathom.adapters.sql.console import SqlConsoleOverview, SqlConsoleStore
from mailfathom.adapters.sql.console_news import SqlConsoleNews
from mailfathom.adapters.sql.console_passkeys import SqlPasskeyStore
from mailfathom.adapters.sql.contacts import SqlContactBook
from mailfathom.adapters.sql.content_repair import SqlContentRepairStore
from mailfathom.adapters.sql.conversation_store import SqlConversationStore
from mailfathom.adapters.sql.drafts import SqlDraftStore
from mailfathom.adapters.sql.engine import create_store_engine, store_url
from mailfathom.adapters.sql.fencing import StoreFencing
from mailfathom.adapters.sql.folder_creation_admin import SqlFolderCreationRecords
from mailfathom.adapters.sql.folder_creations import SqlFolderCreations
from mailfathom.adapters.sql.lease_recheck import SqlLeaseRecheck
from mailfathom.adapters.sql.moves import SqlMoveLedger
from mailfathom.adapters.sql.mutation_admin import SqlMutationRecords
from mailfathom.adapters.sql.mutations import SqlMutationStore
from mailfathom.adapters.sql.opening import refusals_as_store_errors
from mailfathom.adapters.sql.organizing import SqlOrganizeStore
from mailfathom.adapters.sql.outbox import SqlOutbox
from mailfathom.adapters.sql.overview import SqlStoreOverview
from mailfathom.adapters.sql.owner_alerts import SqlOwnerAlerts
from mailfathom.adapters.sql.pending_repairs import SqlPendingRepairs
from mailfathom.adapters.sql.readiness import schema_current, store_answers
from mailfathom.adapters.sql.replicas import SqlSharedQuestions, SqlSharedSessions
from mailfathom.adapters.sql.store_clock import StoreClock
from mailfathom.adapters.sql.sync_failures import SqlSyncFailures
from mailfathom.adapters.sql.sync_store import SqlSyncStore
from mailfathom.adapters.sql.trust_records import SqlTrustRecords
from mailfathom.adapters.sql.work_leases import SqlWorkLeases
from mailfathom.adapters.state_keys import CURSORS, REQUEST_STATE, derived_key
from mailfathom.app.answering.administer_answering import AnsweringAdministration
from mailfathom.app.answering.ask_mail import AnsweringPorts, MailboxQuestionReader
from mailfathom.app.answering.availability import Availability, ChatRefusals
from mailfathom.app.answering.ports import ChatModel
from mailfathom.app.confirmation.administer_alerts import OwnerAlertAdministration
from mailfathom.app.confirmation.confirmed_sending import ConfirmedSending
from mailfathom.app.confirmation.signal import AlertSignal
from mailfathom.app.console.caller_access import CallerAccess
from mailfathom.app.console.caller_keys import CallerKeys
from mailfathom.app.console.contact_book import ConsoleContacts
from mailfathom.app.console.live import ConsoleNews
from mailfathom.app.console.mutations import ConsoleMutations
from mailfathom.app.console.outbox import ConsoleOutbox
from mailfathom.app.console.overview import ConsoleOverview
from mailfathom.app.console.passkeys import ConsolePasskeys
from mailfathom.app.console.signing_in import ConsoleAccess
from mailfathom.app.console.sync_health import SyncHealth
from mailfathom.app.console.tool_calls import ToolCalls
from mailfathom.app.console.waiting_drafts import WaitingDrafts
from mailfathom.app.contacts.create_contact import ContactCreation
from mailfathom.app.contacts.delete_contact import ContactErasure
from mailfathom.app.contacts.export_contacts import ContactExport
from mailfathom.app.contacts.get_contact import ContactLookup
from mailfathom.app.contacts.import_contacts import ContactImport
from mailfathom.app.contacts.list_contacts import ContactListing
from mailfathom.app.contacts.peers import keep_peers_in_step
from mailfathom.app.contacts.promote_contact import ContactPromotion
from mailfathom.app.contacts.update_contact import ContactAmendment
from mailfathom.app.contacts.vouching import BookVouching
from mailfathom.app.drafting.composition import DraftComposition
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.delete_draft import DraftDeletion
from mailfathom.app.drafting.finish_draft_copies import DraftFolderUpkeep
from mailfathom.app.drafting.kept_sends import SendsKeptAsDrafts
from mailfathom.app.drafting.save_draft import DraftSaving
from mailfathom.app.drafting.send_draft import DraftPromotion
from mailfathom.app.drafting.update_draft import DraftEditing
from mailfathom.app.files.resolve_attachments import AttachmentResolver
from mailfathom.app.flags.administer_mutations import MutationAdministration
from mailfathom.app.flags.convergence import MutationConvergence
from mailfathom.app.flags.set_mail_flags import MailFlagChangeRecorder
from mailfathom.app.flags.signal import MutationSignal
from mailfathom.app.maintenance.rederive_conversations import ConversationRederivation
from mailfathom.app.maintenance.store_overview import StoreOverview
from mailfathom.app.maintenance.verify_content import ContentFileUpkeep, StoredContentReader
from mailfathom.app.organize.folder_creations import FolderCreationConvergence
from mailfathom.app.organize.moves import MoveConvergence
from mailfathom.app.organize.organize_email import EmailOrganizer
from mailfathom.app.reading.attachment_links import LinkIssuing
from mailfathom.app.reading.download_attachment import AttachmentDownload
from mailfathom.app.reading.get_email_content import EmailContentReader
from mailfathom.app.reading.list_accounts import AccountDirectoryReader
from mailfathom.app.reading.list_emails import MailboxTimelineReader
from mailfathom.app.reading.saving import PartSaving
from mailfathom.app.reading.search_emails import MailboxSearchReader
from mailfathom.app.sending.administer_outbox import OutboxAdministration
from mailfathom.app.sending.answered_email import AnsweredEmails
from mailfathom.app.sending.cancel_outgoing_email import OutgoingMailCancellation
from mailfathom.app.sending.deliver_outgoing import DeliveryPass
from mailfathom.app.sending.forward_email import EmailForward
from mailfathom.app.sending.get_outgoing_email import OutgoingMailReader
from mailfathom.app.sending.reply_to_email import EmailReply
from mailfathom.app.sending.send_email import AuthoredMailSubmission
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.content_screen import ContentScreen
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.query_placement import QueryPlacement
from mailfathom.app.shared.stored_parts import StoredParts
from mailfathom.app.shared.vector_ports import FillStates
from mailfathom.app.sync.embedding import StoredMailEmbedding
from mailfathom.app.sync.embedding_backfill import EmbeddingBackfill
from mailfathom.app.sync.failure_record import FailureRecord
from mailfathom.app.sync.folder_visibility import settle_folders
from mailfathom.app.sync.pass_activity import PassActivity
from mailfathom.app.sync.ports import ChangeWatch, MailboxSession
from mailfathom.app.sync.reverify import StoredMailReverification
from mailfathom.app.sync.synchronize_account import IDLE_SLICE, AccountSynchronizer
from mailfathom.app.sync.synchronize_folder import FolderSynchronizer, SyncLimits
from mailfathom.app.sync.trust_backfill import TrustBackfill
from mailfathom.app.sync.trust_ports import AuthorshipAssessor, SenderVerifier
from mailfathom.app.sync.trust_step import TrustPorts
from mailfathom.app.sync.work_meter import Unmetered, WorkMeter
from mailfathom.domain.account_health import AccountHealth, AccountWarning, HealthState
from mailfathom.domain.authorship_assessor import build_authorship_assessor
from mailfathom.domain.config import AccountConfig, AccountKind, DeploymentConfig, RemoteImages
from mailfathom.domain.contacts import ContactWriter
from mailfathom.domain.sender_trust import SenderTrustPolicy

if TYPE_CHECKING:
    # Imported where they are made: a command loads only the libraries it uses (webauthn,
    # detect_secrets, numpy, vobject, dkim, the chat client), which keeps every start short.
    from mailfathom.adapters.chat.openai_chat import OpenAiCompatibleChat
    from mailfathom.adapters.sql.folder_catalog import FolderCatalog
    from mailfathom.adapters.sql.passage_store import SqlPassageStore
    from mailfathom.adapters.sql.reading import SqlMailboxReader
    from mailfathom.adapters.sql.vector_cache import VectorCache


def utc_now() -> datetime:
    return datetime.now(UTC)


class _ConnectorByKind:
    """Routes each account to the connector of its kind."""

    def __init__(self, imap: ImapConnector, local: LocalConnector) -> None:
        self.imap = imap
        self.local = local

    def open(self, account: AccountConfig) -> MailboxSession:
        if account.kind is AccountKind.LOCAL:
            return self.local.open(account)
        return self.imap.open(account)

    def change_watch(self, account: AccountConfig) -> ChangeWatch | None:
        if account.kind is AccountKind.LOCAL:
            return self.local.change_watch(account)
        return None


@dataclass(frozen=True, slots=True)
class ReadingUseCases:
    accounts: AccountDirectoryReader
    timeline: MailboxTimelineReader
    content: EmailContentReader
    search: MailboxSearchReader


@dataclass(frozen=True, slots=True)
class SendingUseCases:
    send: AuthoredMailSubmission
    replies: EmailReply
    forwards: EmailForward
    outgoing: OutgoingMailReader
    cancellation: OutgoingMailCancellation


@dataclass(frozen=True, slots=True)
class DraftingUseCases:
    save: DraftSaving
    update: DraftEditing
    delete: DraftDeletion
    send: DraftPromotion


@dataclass(frozen=True, slots=True)
class ContactUseCases:
    listing: ContactListing
    lookup: ContactLookup
    creation: ContactCreation
    amendment: ContactAmendment
    erasure: ContactErasure
    promotion: ContactPromotion


@dataclass(frozen=True, slots=True)
class ContactExchange:
    export: ContactExport
    importing: ContactImport


@dataclass(frozen=True, slots=True)
class FilesUseCases:
    attachments: AttachmentResolver


@dataclass(frozen=True, slots=True)
class MaintenanceUseCases:
    overview: StoreOverview
    rederivation: ConversationRederivation
    content_check: StoredContentReader
    content_upkeep: ContentFileUpkeep


def load_deployment(path: Path) -> DeploymentConfig:
    """The deployment a configuration file describes."""
    return load_config(path)


# Allocations between collections of the youngest generation (the interpreter's default is
# 700). See `_settle_collector`.
COLLECTOR_THRESHOLD = 10_000
# The lease rounds' connections per process on PostgreSQL: one per lease loop (accounts,
# embedding), one for a pass run once, one to spare.
LEASE_CONNECTIONS = 4
_collector_lock = threading.Lock()
_collector_settled = False


def _settle_collector() -> None:
    """Set the cyclic garbage collector up for a process that synchronizes mail, once; a
    process that only serves the tools keeps the interpreter's settings.

    A synchronization allocates many short-lived containers: at the default threshold the
    synchronizing process ran about 620 young and 5 full collections per 20,000 messages, 1.0
    to 1.1 s of its CPU. What start-up built (modules, the schema, the engine) lives as long
    as the process, so it is frozen out of the full collections that walked it every time,
    and young collections run every 10,000 allocations: 0.47 to 0.55 s. The garbage in
    cycles is still collected, only in larger rounds."""
    global _collector_settled
    with _collector_lock:
        if _collector_settled:
            return
        _collector_settled = True
        gc.collect()
        gc.freeze()
        gc.set_threshold(COLLECTOR_THRESHOLD, 10, 10)


@dataclass
class Services:
    config: DeploymentConfig
    engine: sa.Engine
    store: SqlSyncStore
    content: HeldContent
    connectors: _ConnectorByKind
    preparer: MimeMessagePreparer
    content_repair: SqlContentRepairStore
    conversations: SqlConversationStore
    overview: SqlStoreOverview
    clock: Callable[[], datetime] = field(default=utc_now)
    read_engine: sa.Engine | None = None
    # The lease rounds' own connections on PostgreSQL (see `work_leases`), made on first use.
    lease_engine: sa.Engine | None = None
    mutation_signal: MutationSignal = field(default_factory=MutationSignal)
    # Told of each owner alert recorded in this process (the MCP endpoint counts them).
    alert_signal: AlertSignal = field(default_factory=AlertSignal)
    # The download key ring, read on first use (see `attachment_links`).
    sealed_links: SealedLinks | None = None
    # The ports each stored message's sender verdict and authorship reading come from; none
    # wired: nothing is recorded, and mail reads as not yet verified and not assessed.
    sender_verifier: SenderVerifier | None = None
    authorship_assessor: AuthorshipAssessor | None = None
    # Where every connection logging in with an account's grant says how it fared (none:
    # nothing is written down).
    grant_health: GrantHealth | None = None
    # The active embedding profile's provider; none: mail is not embedded, and search is lexical.
    embedder: OpenEmbedder | None = None
    # Each generation's passage vectors as this process holds them, shared by every reader:
    # made by the first (`_reader`), so that a command reading no mail never loads numpy.
    vectors: VectorCache | None = None
    folder_catalog: FolderCatalog | None = None
    _vectors_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _leases_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Where queries are placed in the embedder's space, and what that says of search: made on
    # first use from `embedder` (see `query_placement`), shared by every search, listing and
    # the embedding worker of this process.
    placement: QueryPlacement | None = None
    # The synchronization passes running in this process, which the embedding worker
    # yields to.
    pass_activity: PassActivity = field(default_factory=PassActivity)
    # What this process's metrics count of its passes and embedding (set by the command
    # that publishes them, before the workers start).
    work_meter: WorkMeter = field(default_factory=Unmetered)
    _placement_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # When the chat endpoint last refused, shared by every listing and question of this
    # process; and the endpoint's client, made on first use and closed with the services.
    chat_refusals: ChatRefusals | None = None
    chat_model: OpenAiCompatibleChat | None = None

    @classmethod
    def open(
        cls,
        config: DeploymentConfig,
        *,
        migrate_schema: bool = True,
        clock: Callable[[], datetime] = utc_now,
    ) -> Services:
        # First, so that weights other than the configured ones stop a start before the
        # store is touched.
        embedder = open_active_embedder(config.embeddings)
        try:
            return cls._open(config, migrate_schema, clock, embedder)
        except BaseException:
            if embedder is not None:
                embedder.close()
            raise

    @classmethod
    def _open(
        cls,
        config: DeploymentConfig,
        migrate_schema: bool,
        clock: Callable[[], datetime],
        embedder: OpenEmbedder | None,
    ) -> Services:
        with refusals_as_store_errors():
            config.store.data_dir.mkdir(parents=True, exist_ok=True)
            engine = create_store_engine(store_url(config.store))
            try:
                if migrate_schema:
                    migrate.upgrade(engine)
                    if config.store.partitions:
                        partitioning.partition(engine, config.store.partitions)
                    keep_peers_in_step(SqlContactBook(engine), config, clock)
                    settle_folders(
                        SqlSyncStore(engine),
                        SqlContactBook(engine),
                        config.accounts,
                        SqlFolderCreations(engine).created_folders,
                        clock,
                    )
                place = content_place(config.store)
                content = place.open()
            except BaseException:
                engine.dispose()
                raise
        grant_health = GrantHealth(SqlAccountHealth(engine), clock)
        return cls(
            config=config,
            engine=engine,
            store=SqlSyncStore(engine),
            content=content,
            connectors=_ConnectorByKind(
                ImapConnector(health=grant_health), LocalConnector(config.store.data_dir)
            ),
            grant_health=grant_health,
            preparer=MimeMessagePreparer(place, workers=default_workers()),
            content_repair=SqlContentRepairStore(engine),
            conversations=SqlConversationStore(engine),
            overview=SqlStoreOverview(engine),
            clock=clock,
            sender_verifier=sender_verifier(config.sender_verification),
            authorship_assessor=build_authorship_assessor(config.machine_authorship),
            embedder=embedder,
        )

    def folder_synchronizer(self, account: AccountConfig) -> FolderSynchronizer:
        limits = SyncLimits(
            batch_messages=self.config.sync.batch_messages,
            batch_octets=self.config.sync.batch_octets,
            max_message_octets=account.max_message_octets,
            storage_ceiling_octets=account.storage_ceiling_octets,
        )
        return FolderSynchronizer(
            self.store,
            self.content,
            self.preparer,
            clock=self.clock,
            limits=limits,
            stored_octets=lambda: self.overview.stored_octets(account.account_id),
            collector=SqlContactBook(self.engine) if account.collect_contacts else None,
            own_addresses=account.own_addresses(),
            withheld=SqlContactBook(self.engine),
            trust=self.trust_ports(account),
            recheck=SqlLeaseRecheck(self.engine),
        )

    def trust_ports(self, account: AccountConfig) -> TrustPorts:
        """The trust ports as this deployment wires them, with what the account trusts: its
        configured ids and, for a local account, the deployment's own, which only this
        deployment can have put on top of such an account's mail (see `deployment_results`).
        An IMAP account's server could hold anything, so it trusts the id only if named."""
        trusted = account.trusted_authserv_ids
        if account.kind is AccountKind.LOCAL:
            trusted = trusted | {self.config.authserv_id}
        return TrustPorts(self.sender_verifier, self.authorship_assessor, trusted)

    def _served(self) -> list[ServedAccount]:
        return [
            ServedAccount(a.account_id, a.display_name, a.sync_mode.value)
            for a in self.config.accounts
        ]

    def _reading_engine(self) -> sa.Engine:
        """The read-only engine, created on first use and shared."""
        if self.read_engine is None:
            self.read_engine = create_store_engine(store_url(self.config.store), read_only=True)
        return self.read_engine

    def _reader(self) -> SqlMailboxReader:
        """A reader on the read-only engine, sharing the process's vectors and folders."""
        from mailfathom.adapters.sql.folder_catalog import FolderCatalog
        from mailfathom.adapters.sql.reading import SqlMailboxReader
        from mailfathom.adapters.sql.vector_cache import VectorCache

        with self._vectors_lock:
            if self.vectors is None:
                self.vectors = VectorCache()
            if self.folder_catalog is None:
                self.folder_catalog = FolderCatalog()
        return SqlMailboxReader(
            self._reading_engine(),
            texts=self.content.get_text,
            vectors=self.vectors,
            catalog=self.folder_catalog,
        )

    def screen(self) -> ContentScreen:
        """The sensitive-content screen `[SensitiveContent]` asks for (passing everything
        through when it is off)."""
        from mailfathom.adapters.sensitive.scanner import DetectorScanner

        config = self.config.sensitive_content
        return ContentScreen(DetectorScanner() if config.enabled else None, config)

    def _signer(self) -> HmacCursorSigner:
        return HmacCursorSigner(self._cursor_key())

    def _cursor_key(self) -> bytes:
        """Under the state secret where one is configured (replicas on several machines
        open each other's cursors), else the key file in this machine's data directory."""
        if self.config.mcp.state_secret is None:
            return key_from_file(self.config.store.data_dir / "cursor.key")
        return derived_key(read_secret(self.config.mcp.state_secret), CURSORS)

    def shared_clock(self) -> StoreClock:
        """The store's clock, read without a round trip (`StoreClock`, to be measured).
        From here on every time this process writes or compares (sessions, console
        sessions, download links) is read off it, so that processes on several machines
        sharing the store agree; the clock this process was opened with is taken as the
        machine's."""
        if not isinstance(self.clock, StoreClock):
            self.clock = StoreClock(self.engine, self.clock)
        return self.clock

    def replica_stores(self) -> tuple[SqlSharedSessions, SqlSharedQuestions]:
        """What replicas of the MCP endpoint share: sessions, and questions in flight."""
        return SqlSharedSessions(self.engine), SqlSharedQuestions(self.engine)

    def request_state_key(self) -> bytes | None:
        """What the MCP endpoint seals a question's request state under, where the state
        secret is configured; None leaves it to a key made per process."""
        if self.config.mcp.state_secret is None:
            return None
        return derived_key(read_secret(self.config.mcp.state_secret), REQUEST_STATE)

    def vouching(self) -> BookVouching:
        """What vouches for a recipient beyond the deployment's own addresses."""
        delivery = self.config.mail_delivery
        return BookVouching(
            SqlContactBook(self.engine),
            delivery.vouching_contacts,
            delivery.caller_written_contacts_vouch,
        )

    def contacts(self, writer: ContactWriter = ContactWriter.CALLER) -> ContactUseCases:
        """The contact book's use cases; none of them reaches anything outside the store.
        `writer` is who their writes are recorded as: an MCP caller's unless the operator's
        own command asks for them."""
        book = SqlContactBook(self.engine)
        screen = self.screen()
        return ContactUseCases(
            listing=ContactListing(
                book,
                SealedCursorSigner(self._cursor_key()),
                screen,
            ),
            lookup=ContactLookup(book, screen),
            creation=ContactCreation(book, clock=self.clock, writer=writer, screen=screen),
            amendment=ContactAmendment(book, clock=self.clock, writer=writer, screen=screen),
            erasure=ContactErasure(book),
            promotion=ContactPromotion(book, writer=writer),
        )

    def contact_exchange(self, writer: ContactWriter = ContactWriter.CALLER) -> ContactExchange:
        """The book carried out to and in from other address books, as vCard."""
        from mailfathom.adapters.vcard import VCardFormat

        book = SqlContactBook(self.engine)
        cards = VCardFormat()
        return ContactExchange(
            export=ContactExport(book, cards),
            importing=ContactImport(book, cards, clock=self.clock, writer=writer),
        )

    def reading(self) -> ReadingUseCases:
        """The four reading use cases over the local store; none of them holds a mailbox
        connection."""
        reader = self._reader()
        served = self._served()
        signer = self._signer()
        trust = self.sender_trust()
        screen = self.screen()
        return ReadingUseCases(
            accounts=AccountDirectoryReader(
                reader, served, synchronization_enabled=self.config.sync.enabled
            ),
            timeline=MailboxTimelineReader(
                reader, served, signer, sender_trust=trust, screen=screen
            ),
            content=EmailContentReader(
                reader,
                served,
                self.content,
                self.content_repair,
                NhHtmlSanitizer(),
                PartSaving(self._stored_parts(), self._file_roots()),
                self._link_issuing(),
                remote_images=frozenset(
                    a.account_id
                    for a in self.config.accounts
                    if a.remote_images is RemoteImages.ALLOW
                ),
                sender_trust=trust,
                screen=screen,
            ),
            search=MailboxSearchReader(
                reader,
                served,
                Re2PatternCompiler(),
                sender_trust=trust,
                screen=screen,
                placement=self.query_placement(),
            ),
        )

    def answering(self, search: MailboxSearchReader | None = None) -> MailboxQuestionReader:
        """ask_mail's use case: its lookups are answered by `search` (the search_emails use
        case the endpoint serves, else one of its own), its questions by the `[Answering]`
        endpoint. The endpoint's key is read here: one that cannot be read stops the command
        that asked (`ConfigurationError`)."""
        config = self.config.answering
        if self.chat_refusals is None:
            self.chat_refusals = ChatRefusals(config.recheck_seconds)
        availability = Availability(
            config.endpoint is not None, self.query_placement(), self.chat_refusals
        )
        ports = AnsweringPorts(
            chat=self._chat(),
            lookup=SearchLookup(search if search is not None else self.reading().search),
            store=self._reader(),
            ledger=SqlAnsweringLedger(self.engine),
            health=SqlChatHealth(self.engine),
        )
        return MailboxQuestionReader(ports, self._served(), availability, config, clock=self.clock)

    def answering_administration(self) -> AnsweringAdministration:
        """What `mfctl answering` shows; reaches no endpoint."""
        return AnsweringAdministration(
            self.config.answering,
            SqlAnsweringLedger(self.engine),
            SqlChatHealth(self.engine),
            clock=self.clock,
        )

    def _chat(self) -> ChatModel | None:
        endpoint = self.config.answering.endpoint
        if endpoint is None:
            return None
        if self.chat_model is None:
            from mailfathom.adapters.chat.openai_chat import OpenAiCompatibleChat

            key = None if endpoint.api_key is None else read_secret(endpoint.api_key)
            self.chat_model = OpenAiCompatibleChat(endpoint, key)
        return self.chat_model

    def sender_trust(self) -> SenderTrustPolicy:
        """The authors this deployment trusts once authenticated: `[SenderTrust]` and the
        served accounts' own addresses, as the configuration stands."""
        configured = self.config.sender_trust
        own = (a for account in self.config.accounts for a in account.own_addresses())
        return SenderTrustPolicy.of((*configured.trusted_senders, *own), configured.trusted_domains)

    def trust_backfill(self) -> TrustBackfill:
        """Reading what synchronization passes stored without readings (`trust_backfill`)."""
        return TrustBackfill(self.reverification(), self.trust_ports)

    def passage_store(self) -> SqlPassageStore:
        """Stored passage vectors, their generations and how far each is filled."""
        from mailfathom.adapters.sql.passage_store import SqlPassageStore

        return SqlPassageStore(self.engine, texts=self.content.get_text)

    def fill_states(self) -> FillStates:
        """How far each generation is filled, as the search path reads it: on the read-only
        engine, as the search's own reads are (SQLite's writer engine begins by taking the
        write lock, which would hold each search behind a synchronization's batch). Not on
        PostgreSQL, whose read-only engine leaves finding a lost connection to the reader's
        snapshot (`create_store_engine`)."""
        from mailfathom.adapters.sql.passage_store import SqlPassageStore

        engine = self.engine if self.engine.dialect.name == "postgresql" else None
        return SqlPassageStore(engine or self._reading_engine(), texts=self.content.get_text)

    def query_placement(self) -> QueryPlacement:
        """This process's `QueryPlacement`, made on first use from the active embedder."""
        with self._placement_lock:
            if self.placement is None:
                embeddings = self.config.embeddings
                active = embeddings.active
                self.placement = QueryPlacement(
                    self.embedder,
                    self.fill_states() if self.embedder is not None else None,
                    recheck_seconds=embeddings.recheck_seconds,
                    min_similarity=0.0 if active is None else active.similarity_floor,
                )
            return self.placement

    def embedding(self, *, windowed: bool = True) -> StoredMailEmbedding | None:
        """Embedding stored mail in the active profile's space, or None when no profile is
        active. `windowed` (the worker): its provider's failures and recoveries are the
        search's too, and it keeps the same recheck window (`QueryPlacement.embedder`);
        without it (`mfctl mailbox embed`, which an operator runs to ask now) the provider is
        asked directly."""
        embedder = self.query_placement().embedder if windowed else self.embedder
        if embedder is None:
            return None
        return StoredMailEmbedding(self.passage_store(), embedder, clock=self.clock)

    def embedding_backfill(self) -> EmbeddingBackfill | None:
        """The deployment's embedding worker (`embedding_backfill`), None without a profile."""
        embedding = self.embedding()
        if embedding is None:
            return None
        return EmbeddingBackfill(embedding, activity=self.pass_activity, meter=self.work_meter)

    def reverification(self) -> StoredMailReverification:
        """Verifying and assessing stored mail again (`mfctl mailbox reverify`)."""
        return StoredMailReverification(
            SqlTrustRecords(self.engine),
            self.content,
            self.preparer.message,
            clock=self.clock,
        )

    def attachment_links(self) -> SealedLinks | None:
        """The deployment's download links, None where `[Downloads]` issues none. The key
        ring is read on first use: a key secret that cannot be read stops the command that
        needed it (`ConfigurationError`) before it serves anything."""
        if self.sealed_links is None:
            self.sealed_links = links_of(self.config.downloads)
        return self.sealed_links

    def _link_issuing(self) -> LinkIssuing | None:
        links = self.attachment_links()
        if links is None:
            return None
        lifetime = timedelta(seconds=self.config.downloads.link_lifetime_seconds)
        return LinkIssuing(links, lifetime, self.clock)

    def download(self) -> AttachmentDownload:
        """What the HTTP entrypoint serves a download link with."""
        return AttachmentDownload(self.attachment_links(), self._stored_parts(), self.clock)

    def _stored_parts(self) -> StoredParts:
        return StoredParts(
            self._reader(),
            self._served(),
            self.content,
            self.content_repair,
            MimeAttachmentReader(),
        )

    def _file_roots(self) -> LocalFileRoots:
        return LocalFileRoots(self.config.mail_delivery.attachment_roots)

    def files(self) -> FilesUseCases:
        """Files a message carries by reference, read and frozen when resolved."""
        return FilesUseCases(
            attachments=AttachmentResolver(
                self.config.mail_delivery, self._stored_parts(), self._file_roots()
            )
        )

    def sending(self) -> SendingUseCases:
        """The sending use cases over the outbox; none of them reaches a mail server."""
        served = self._served()
        outbox = SqlOutbox(self.engine, self.clock)
        submission = Submission(
            self.config,
            outbox,
            StdlibComposer(),
            clock=outbox.now,
            confirmed=self._confirmed_sending(),
            drafts=SendsKeptAsDrafts(
                SqlDraftStore(self.engine), self.draft_copies(), StdlibComposer(), self.clock
            ),
            recipients=self.vouching(),
        )
        answered = AnsweredEmails(self._reader(), served, self.content, self.content_repair)
        return SendingUseCases(
            send=AuthoredMailSubmission(submission, served),
            replies=EmailReply(submission, answered),
            forwards=EmailForward(submission, answered, MimeAttachmentReader()),
            outgoing=OutgoingMailReader(outbox),
            cancellation=OutgoingMailCancellation(outbox, clock=outbox.now),
        )

    def _confirmed_sending(self) -> ConfirmedSending:
        return ConfirmedSending(
            SqlOwnerAlerts(self.engine),
            clock=self.clock,
            raised=self.alert_signal.notify,
            screen=self.screen(),
        )

    def draft_copies(self) -> DraftCopies:
        """The drafts held here and the owner's drafts folders they are copied to."""
        folders = DraftFolderCopies(
            self.config, LocalConnector(self.config.store.data_dir), self.connectors.imap
        )
        return DraftCopies(SqlDraftStore(self.engine), folders, clock=self.clock)

    def drafting(self) -> DraftingUseCases:
        """The drafting use cases. Saving, editing and deleting reach the owner's own mail
        server (the drafts folder); sending a draft only writes its outgoing record."""
        served = self._served()
        store = SqlDraftStore(self.engine)
        copies = self.draft_copies()
        outbox = SqlOutbox(self.engine, self.clock)
        composition = DraftComposition(
            self.config,
            served,
            AnsweredEmails(self._reader(), served, self.content, self.content_repair),
            MimeAttachmentReader(),
            StdlibComposer(),
            self.files().attachments,
        )
        return DraftingUseCases(
            save=DraftSaving(composition, store, copies, clock=self.clock),
            update=DraftEditing(composition, store, copies, served, clock=self.clock),
            delete=DraftDeletion(store, copies, served, clock=self.clock),
            send=DraftPromotion(
                self.config,
                store,
                outbox,
                served,
                self._confirmed_sending(),
                MimeMessageViewer(),
                clock=outbox.now,
                recipients=self.vouching(),
            ),
        )

    def outbox(self) -> OutboxAdministration:
        """The operator's list, read and withdrawal of queued sends."""
        outbox = SqlOutbox(self.engine, self.clock)
        return OutboxAdministration(outbox, clock=outbox.now)

    def flags(self) -> MailFlagChangeRecorder:
        """Flag changes written down for the accounts' synchronization runs to carry."""
        return MailFlagChangeRecorder(
            SqlMutationStore(self.engine),
            self._reader(),
            self._served(),
            wake=self.mutation_signal.notify,
            clock=self.clock,
        )

    def organizer(self) -> EmailOrganizer:
        """Moves, archiving, trashing and labels written down for the synchronization runs."""
        return EmailOrganizer(
            SqlOrganizeStore(self.engine),
            self._reader(),
            self._served(),
            SqlFolderCreations(self.engine),
            wake=self.mutation_signal.notify,
            clock=self.clock,
        )

    def mutations(self) -> MutationAdministration:
        """The operator's list, read and retry of recorded mailbox changes."""
        return MutationAdministration(
            SqlMutationRecords(self.engine),
            SqlFolderCreationRecords(self.engine),
            wake=self.mutation_signal.notify,
            clock=self.clock,
        )

    def alerts(self) -> OwnerAlertAdministration:
        """The operator's list and dismissal of owner alerts."""
        return OwnerAlertAdministration(SqlOwnerAlerts(self.engine), clock=self.clock)

    def console_access(self) -> ConsoleAccess:
        """The owner's sign-in to the console, its sessions and the owner password."""
        return ConsoleAccess(SqlConsoleStore(self.engine), Argon2Passwords(), clock=self.clock)

    def console_drafts(self) -> WaitingDrafts:
        """The drafts waiting for the owner, and the owner's Send, Edit and Delete of them:
        the drafting use cases an agent's calls run."""
        drafting = self.drafting()
        return WaitingDrafts(
            SqlOwnerAlerts(self.engine),
            SqlDraftStore(self.engine),
            drafting.send,
            drafting.update,
            drafting.delete,
            self._confirmed_sending(),
        )

    def account_names(self) -> dict[str, str]:
        """Each configured account's display name by its identifier."""
        return {a.account_id: a.display_name for a in self.config.accounts}

    def console_outbox(self) -> ConsoleOutbox:
        """The console's outbox: the operator's list and withdrawal of sends."""
        administration = self.outbox()
        return ConsoleOutbox(administration, clock=administration.now)

    def console_mutations(self) -> ConsoleMutations:
        """The console's open and dead-lettered changes, and their retry."""
        return ConsoleMutations(self.mutations())

    def console_passkeys(self) -> ConsolePasskeys:
        """The owner's passkeys: enrolment, sign-in, list and removal, for the configured
        name and origins."""
        from mailfathom.adapters.passkeys import WebAuthnCeremonies

        config = self.config.console
        return ConsolePasskeys(
            SqlPasskeyStore(self.engine),
            WebAuthnCeremonies(),
            self.console_access(),
            name=config.passkey_name,
            origins=config.origins(),
            clock=self.clock,
        )

    def console_overview(self) -> ConsoleOverview:
        """The counts the console's overview shows."""
        return ConsoleOverview(
            SqlConsoleOverview(self.engine),
            [(a.account_id, a.display_name) for a in self.config.accounts],
            self.account_health,
            clock=self.clock,
        )

    def console_health(self) -> SyncHealth:
        """The console's synchronization health: what `mfctl accounts` shows, with each
        pass's last failure code and the repairs that wait."""
        return SyncHealth(
            self.config.accounts,
            StoreOverview(self.overview),
            self.account_health,
            self.account_warnings,
            SqlSyncFailures(self.engine),
            SqlPendingRepairs(self.engine),
            clock=self.clock,
        )

    def console_contacts(self) -> ConsoleContacts:
        """The console's contact book, with `mfctl contact`'s promote and delete."""
        uses = self.contacts(ContactWriter.OPERATOR)
        return ConsoleContacts(
            uses.listing, uses.lookup, uses.promotion, uses.erasure, SqlContactBook(self.engine)
        )

    def caller_access(self) -> CallerAccess:
        """The MCP endpoint's caller entries with their console keys, and its recent tool
        calls: what the console shows and decides, and what the endpoint admits and
        records through the same use cases."""
        return CallerAccess(
            CallerKeys(
                SqlApiKeys(self.engine),
                self.config.mcp.callers,
                clock=self.clock,
                published=self.config.mcp.published_categories,
            ),
            ToolCalls(SqlToolCalls(self.engine), clock=self.clock),
        )

    def console_news(self) -> ConsoleNews:
        """What keeps the console's open pages current: the store's mark, and this
        process's owner alerts as they are raised."""
        return ConsoleNews(
            SqlConsoleNews(self.engine),
            self.console_access(),
            lambda wake: self.alert_signal.listen(lambda alert: wake()),
            # A send comes due on the clock the delivery pass claims by.
            clock=SqlOutbox(self.engine, self.clock).now,
        )

    def maintenance(self) -> MaintenanceUseCases:
        """The operator's view and upkeep of the local store."""
        return MaintenanceUseCases(
            overview=StoreOverview(self.overview),
            rederivation=ConversationRederivation(self.conversations),
            content_check=StoredContentReader(self.content_repair, self.content),
            content_upkeep=ContentFileUpkeep(self.content),
        )

    def deliver_sample_mail(self, account_id: str, messages: int) -> None:
        """Fill a local account's folders with generated sample mail (the demo)."""
        from mailfathom.adapters.authentication.deployment_results import unvouched

        for sample in generate_mailbox(messages):
            folder = self.connectors.local.folder(account_id, sample.folder)
            raw = unvouched(sample.raw, self.config.authserv_id)
            folder.deliver(raw, sample.flags, sample.received_at)

    def import_mail(self, account_id: str, folder: str, source: Path) -> ImportCount:
        """File existing mail (a Maildir, .eml files or an mbox) into a local account's
        folder, each message once, keeping its bytes and its arrival time."""
        from mailfathom.adapters.authentication.deployment_results import unvouched

        target = self.connectors.local.folder(account_id, folder)
        return import_source(target, source, lambda raw: unvouched(raw, self.config.authserv_id))

    def delivery_pass(
        self,
        worker: str | None = None,
        tls_context: Callable[[], ssl.SSLContext] = ssl.create_default_context,
    ) -> DeliveryPass:
        """The delivery pass: queued sends to peer mailboxes and submission servers."""
        peers = LocalPeerMailboxes(self.config, LocalConnector(self.config.store.data_dir))
        # Leases and due times on the store's clock, as every writer of a send has them.
        from mailfathom.adapters.processes import this_machine

        outbox = SqlOutbox(self.engine, self.clock, machine=this_machine())
        return DeliveryPass(
            outbox,
            SmtpTransports(self.config, tls_context, health=self.grant_health),
            peers,
            SentFolderCopies(self.config, peers, self.connectors.imap),
            self.config.mail_delivery,
            clock=outbox.now,
            worker=worker,
            draft_copies=self.draft_copies(),
        )

    def work_leases(self) -> SqlWorkLeases:
        """Leases on accounts and on the deployment's single workers (`lease_loop`)."""
        from mailfathom.adapters.processes import this_machine

        return SqlWorkLeases(self._leasing_engine(), self.clock, machine=this_machine())

    def _leasing_engine(self) -> sa.Engine:
        """On PostgreSQL, a few connections of the leases' own: the runs of the accounts a
        worker holds may each hold one of the store engine's, and a renewal or heartbeat
        waiting for one of those would come late enough for the leases to be lost."""
        if self.engine.dialect.name != "postgresql":
            return self.engine
        with self._leases_lock:
            if self.lease_engine is None:
                url = store_url(self.config.store)
                self.lease_engine = create_store_engine(url, connections=LEASE_CONNECTIONS)
            return self.lease_engine

    def fencing(self) -> StoreFencing:
        """Fencing of the writes made under a lease, on this process's store engine."""
        return StoreFencing(self.engine)

    def account_synchronizer(self, idle_slice: float = IDLE_SLICE) -> AccountSynchronizer:
        """Synchronizes accounts; the process that asks for one synchronizes mail, so its
        collector is settled for that here. `idle_slice`: how soon a push run sees that it
        is to stop."""
        _settle_collector()
        return AccountSynchronizer(
            self.store,
            self.connectors,
            self.folder_synchronizer,
            upkeep=DraftFolderUpkeep(self.draft_copies()).run,
            owner_changes=FlagChangeCarrier(
                MutationConvergence(SqlMutationStore(self.engine), clock=self.clock),
                self.mutation_signal,
                MoveConvergence(
                    SqlMoveLedger(self.engine, SqlSyncStore(self.engine)), clock=self.clock
                ),
                FolderCreationConvergence(SqlFolderCreations(self.engine), clock=self.clock),
            ),
            created_folders=SqlFolderCreations(self.engine).created_folders,
            consent=ConsentOfAccounts(process_tokens()),
            login_secrets=LoginSecretsOfAccounts(),
            activity=self.pass_activity,
            failures=FailureRecord(SqlSyncFailures(self.engine), self.clock),
            idle_slice=idle_slice,
            meter=self.work_meter,
        )

    def sync_failures(self) -> SqlSyncFailures:
        """The code each account's and folder's last failed pass stopped on, kept until a
        pass succeeds (`mfctl accounts`, the console's health page)."""
        return SqlSyncFailures(self.engine)

    def readiness_checks(self) -> dict[str, Callable[[], bool]]:
        """What must hold for this process to be given work, by name: the database answers,
        its schema is this version's, and the content store can be written (each blocking;
        False or an error means not ready)."""
        return {
            "store": lambda: store_answers(self.engine),
            "schema": lambda: schema_current(self.engine),
            "content": self.content.reachable,
        }

    def account_health(self) -> list[AccountHealth]:
        """The accounts held back until a person acts (`mfctl accounts`). A refused grant
        is about the account's grant: one the configuration no longer gives a grant is not
        held. A refused login is about its IMAP login, held while it has one."""
        granted = {a.account_id for a in self.config.accounts if a.oauth is not None}
        logging_in = {a.account_id for a in self.config.accounts if a.imap is not None}
        return [
            h
            for h in SqlAccountHealth(self.engine).states()
            if h.account_id in (granted if h.state is HealthState.CONSENT_REQUIRED else logging_in)
        ]

    def account_warnings(self) -> list[AccountWarning]:
        """What to mend on an account though nothing holds it back (`mfctl accounts`): a
        rotated refresh token its file would not take, for an account whose configuration
        still reads its refresh token from a file."""
        in_file = {
            a.account_id
            for a in self.config.accounts
            if a.oauth is not None and a.oauth.refresh_token.file is not None
        }
        return [w for w in SqlAccountHealth(self.engine).warnings() if w.account_id in in_file]

    def close(self) -> None:
        if self.chat_model is not None:
            self.chat_model.close()
        if self.embedder is not None:
            self.embedder.close()
        self.preparer.close()
        self.content.close()
        if self.read_engine is not None:
            self.read_engine.dispose()
        if self.lease_engine is not None:
            self.lease_engine.dispose()
        self.engine.dispose()

    def __enter__(self) -> Services:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
