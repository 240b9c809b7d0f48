"""The use cases that write sends, drafts, alerts and contacts, assembled over one
`MemoryStore` the way the composition root assembles them over the SQL store.

Everything else they are handed is the real in-process part: the deployment's configuration,
the MIME composer and viewer, the local drafts folders under the store's data directory, the
cursor signer. Only the store is in memory, and its fakes pass the store contract suites."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from fakes.mailbox import EmptyMailbox
from fakes.store import MemoryStore
from mailfathom.adapters.content.packs import PackContentStore
from mailfathom.adapters.cursor_signing import SealedCursorSigner
from mailfathom.adapters.draft_folders import DraftFolderCopies
from mailfathom.adapters.imap.session import ImapConnector
from mailfathom.adapters.local.file_roots import LocalFileRoots
from mailfathom.adapters.local.maildir import LocalConnector
from mailfathom.adapters.mime.attachments import MimeAttachmentReader
from mailfathom.adapters.mime.compose import StdlibComposer
from mailfathom.adapters.mime.viewing import MimeMessageViewer
from mailfathom.adapters.sensitive.scanner import DetectorScanner
from mailfathom.app.confirmation.administer_alerts import OwnerAlertAdministration
from mailfathom.app.confirmation.confirmed_sending import ConfirmedSending
from mailfathom.app.contacts.create_contact import ContactCreation
from mailfathom.app.contacts.delete_contact import ContactErasure
from mailfathom.app.contacts.get_contact import ContactLookup
from mailfathom.app.contacts.list_contacts import ContactListing
from mailfathom.app.contacts.peers import keep_peers_in_step
from mailfathom.app.contacts.promote_contact import ContactPromotion
from mailfathom.app.contacts.update_contact import ContactAmendment
from mailfathom.app.contacts.vouching import BookVouching
from mailfathom.app.drafting.composition import DraftComposition
from mailfathom.app.drafting.copies import DraftCopies
from mailfathom.app.drafting.delete_draft import DraftDeletion
from mailfathom.app.drafting.kept_sends import SendsKeptAsDrafts
from mailfathom.app.drafting.save_draft import DraftSaving
from mailfathom.app.drafting.send_draft import DraftPromotion
from mailfathom.app.drafting.update_draft import DraftEditing
from mailfathom.app.files.resolve_attachments import AttachmentResolver
from mailfathom.app.sending.administer_outbox import OutboxAdministration
from mailfathom.app.sending.answered_email import AnsweredEmails
from mailfathom.app.sending.cancel_outgoing_email import OutgoingMailCancellation
from mailfathom.app.sending.get_outgoing_email import OutgoingMailReader
from mailfathom.app.sending.send_email import AuthoredMailSubmission
from mailfathom.app.sending.submission import Submission
from mailfathom.app.shared.content_screen import ContentScreen
from mailfathom.app.shared.mailbox_selection import ServedAccount
from mailfathom.app.shared.stored_parts import StoredParts
from mailfathom.domain.config import DeploymentConfig
from mailfathom.domain.contacts import ContactWriter


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, start: datetime = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class FakeDeployment:
    """A deployment's writing use cases over an in-memory store. The peers of the
    configuration are kept in the book at once, as opening the real store does."""

    config: DeploymentConfig
    memory: MemoryStore = field(default_factory=MemoryStore)
    clock: Clock = field(default_factory=Clock)

    def __post_init__(self) -> None:
        keep_peers_in_step(self.memory.contacts, self.config, self.clock)

    @property
    def served(self) -> list[ServedAccount]:
        return [
            ServedAccount(a.account_id, a.display_name, a.sync_mode.value)
            for a in self.config.accounts
        ]

    def vouching(self) -> BookVouching:
        delivery = self.config.mail_delivery
        return BookVouching(
            self.memory.contacts,
            delivery.vouching_contacts,
            delivery.caller_written_contacts_vouch,
        )

    def screen(self) -> ContentScreen:
        """The deployment's sensitive-content screen, with the real detectors."""
        config = self.config.sensitive_content
        return ContentScreen(DetectorScanner() if config.enabled else None, config)

    def confirmed(self) -> ConfirmedSending:
        return ConfirmedSending(self.memory.alerts, clock=self.clock, screen=self.screen())

    def draft_copies(self) -> DraftCopies:
        folders = DraftFolderCopies(
            self.config, LocalConnector(self.config.store.data_dir), ImapConnector()
        )
        return DraftCopies(self.memory.drafts, folders, clock=self.clock)

    def submission(self) -> Submission:
        return Submission(
            self.config,
            self.memory.outbox,
            StdlibComposer(),
            clock=self.clock,
            confirmed=self.confirmed(),
            drafts=SendsKeptAsDrafts(
                self.memory.drafts, self.draft_copies(), StdlibComposer(), self.clock
            ),
            recipients=self.vouching(),
        )

    def send(self) -> AuthoredMailSubmission:
        return AuthoredMailSubmission(self.submission(), self.served)

    def outgoing(self) -> OutgoingMailReader:
        return OutgoingMailReader(self.memory.outbox)

    def cancellation(self) -> OutgoingMailCancellation:
        return OutgoingMailCancellation(self.memory.outbox, clock=self.clock)

    def outbox_administration(self) -> OutboxAdministration:
        return OutboxAdministration(self.memory.outbox, clock=self.clock)

    def alert_administration(self) -> OwnerAlertAdministration:
        return OwnerAlertAdministration(self.memory.alerts, clock=self.clock)

    # -- drafting ------------------------------------------------------------------------

    def _composition(self) -> DraftComposition:
        mailbox = EmptyMailbox()
        content = PackContentStore(self.config.store.content_dir)
        parts = StoredParts(mailbox, self.served, content, mailbox, MimeAttachmentReader())
        roots = LocalFileRoots(self.config.mail_delivery.attachment_roots)
        return DraftComposition(
            self.config,
            self.served,
            AnsweredEmails(mailbox, self.served, content, mailbox),
            MimeAttachmentReader(),
            StdlibComposer(),
            AttachmentResolver(self.config.mail_delivery, parts, roots),
        )

    def save_draft(self) -> DraftSaving:
        return DraftSaving(
            self._composition(), self.memory.drafts, self.draft_copies(), clock=self.clock
        )

    def update_draft(self) -> DraftEditing:
        return DraftEditing(
            self._composition(),
            self.memory.drafts,
            self.draft_copies(),
            self.served,
            clock=self.clock,
        )

    def delete_draft(self) -> DraftDeletion:
        return DraftDeletion(self.memory.drafts, self.draft_copies(), self.served, clock=self.clock)

    def send_draft(self) -> DraftPromotion:
        return DraftPromotion(
            self.config,
            self.memory.drafts,
            self.memory.outbox,
            self.served,
            self.confirmed(),
            MimeMessageViewer(),
            clock=self.clock,
            recipients=self.vouching(),
        )

    # -- contacts ------------------------------------------------------------------------

    def list_contacts(self) -> ContactListing:
        signer = SealedCursorSigner.from_key_file(self.config.store.data_dir / "cursor.key")
        return ContactListing(self.memory.contacts, signer)

    def get_contact(self) -> ContactLookup:
        return ContactLookup(self.memory.contacts)

    def create_contact(self, writer: ContactWriter = ContactWriter.CALLER) -> ContactCreation:
        """`writer` is who the writes are recorded as, as `Services.contacts` takes it: an
        MCP caller's unless the operator's own command asks for them."""
        return ContactCreation(self.memory.contacts, clock=self.clock, writer=writer)

    def update_contact(self, writer: ContactWriter = ContactWriter.CALLER) -> ContactAmendment:
        return ContactAmendment(self.memory.contacts, clock=self.clock, writer=writer)

    def delete_contact(self) -> ContactErasure:
        return ContactErasure(self.memory.contacts)

    def promote_contact(self, writer: ContactWriter = ContactWriter.CALLER) -> ContactPromotion:
        return ContactPromotion(self.memory.contacts, writer)
