"""The ports synchronization is written against.

Every port here is synchronous: synchronization runs in worker threads, one mailbox session per
thread, and the store serializes its own writes. Adapters translate their library's exceptions
into `mailfathom.domain.errors` types at the edge.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Protocol

from mailfathom.app.sync.types import (
    ChangeSet,
    EnvelopeItem,
    FetchedMessage,
    FlagChange,
    FolderRecord,
    FolderStatus,
    NewMessage,
    PreparedMessage,
)
from mailfathom.domain.account_health import HealthState
from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.config import AccountConfig, FolderMapping
from mailfathom.domain.contact_collection import SeenPerson
from mailfathom.domain.message import NormalizedMessage, Participant
from mailfathom.domain.sender_verdict import SenderVerdict


class MailboxSession(Protocol):
    """One authenticated session with a mailbox (an IMAP server, or a local Maildir).

    Nothing here ever changes a message: bodies are read with BODY.PEEK (RFC 3501 section
    6.4.5) on a folder opened read-only, so synchronizing never sets \\Seen. (The flag
    changes a caller recorded are carried by `OwnerChanges`, through writers of their own.)
    Raises `SyncError` for a failure worth retrying on the next pass, `MailServerAuthError`
    for refused credentials.
    """

    @property
    def supports_condstore(self) -> bool: ...

    @property
    def supports_qresync(self) -> bool: ...

    @property
    def supports_idle(self) -> bool: ...

    def list_folders(self) -> list[str]: ...

    def select(self, remote_name: str) -> FolderStatus:
        """Open the folder read-only; enables CONDSTORE/QRESYNC reporting where offered."""
        ...

    def search_uids(self) -> list[int]:
        """Every UID the selected folder currently holds, ascending."""
        ...

    def fetch_envelopes(self, uids: Sequence[int]) -> list[EnvelopeItem]:
        """Size, flags, mod-sequence and arrival time; no body octets."""
        ...

    def fetch_bodies(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        """Whole raw messages. UIDs that vanished meanwhile are simply absent."""
        ...

    def fetch_headers(self, uids: Sequence[int]) -> Iterator[FetchedMessage]:
        """Header blocks only, for messages whose bodies are not stored."""
        ...

    def fetch_identity(self, uids: Sequence[int]) -> dict[int, tuple[str | None, int]]:
        """The Message-ID header value (None where the header has none) and size per UID, to
        recognize messages after a reset. UIDs that vanished meanwhile are simply absent."""
        ...

    def changes_since(self, modseq: int) -> ChangeSet:
        """Flag changes and expunges since `modseq` (RFC 7162 sections 3.1.4 and 3.2.6)."""
        ...

    def all_flags(self) -> list[FlagChange]:
        """Every message's current flags, for servers without CONDSTORE."""
        ...

    def wait_for_change(self, timeout_seconds: float) -> bool:
        """Block in IDLE (RFC 2177) until the folder changes or the timeout passes."""
        ...

    def close(self) -> None: ...


class ChangeWatch(Protocol):
    """Notices, without a session, that an account's mailbox changed since a mark was
    taken: how a polled mailbox that offers no IDLE is synchronized as mail arrives."""

    def mark(self) -> object:
        """What the mailbox looks like now, taken before a pass reads it."""
        ...

    def changed_since(self, mark: object) -> bool:
        """Whether the mailbox may have changed since `mark` (a false yes costs one pass; a
        false no is never answered for a change made after the mark). Cheap: called a few
        times a second."""
        ...


class MailboxConnector(Protocol):
    def open(self, account: AccountConfig) -> MailboxSession: ...

    def change_watch(self, account: AccountConfig) -> ChangeWatch | None:
        """A watch over the account's mailbox, or None where only a session can tell."""
        ...


class AccountHealthStore(Protocol):
    """Where an account's health is kept for operators (`mfctl accounts`). Synchronous;
    every write is idempotent."""

    def consent_required(self, account_id: str, at: datetime) -> None:
        """A login of the account ended in `ConsentRequired`; a state already recorded keeps
        its first `since`."""
        ...

    def credentials_refused(self, account_id: str, at: datetime) -> None:
        """The account's IMAP server refused its login (`MailServerAuthError`); a state
        already recorded keeps its first `since`."""
        ...

    def restored(self, account_id: str, only: HealthState | None = None) -> None:
        """A login of the account succeeded: the state it had is cleared, or only `only`
        (a password login says nothing about the account's grant)."""
        ...

    def refresh_token_unsaved(self, account_id: str, at: datetime) -> None:
        """A refresh token the provider issued the account could not be written to its file
        (`REFRESH_TOKEN_UNSAVED`): a warning, which holds nothing back and which no login
        clears; one already recorded keeps its first `since`."""
        ...

    def refresh_token_saved(self, account_id: str) -> None:
        """The account's refresh token file holds the token in use again (written, or a new
        grant written over it): the warning is cleared."""
        ...


class LoginSecrets(Protocol):
    def fingerprint(self, account: AccountConfig) -> str:
        """A digest of the secrets the account's IMAP login reads, read locally (never
        from a server). Raises `SecretUnavailable` when one cannot be read."""
        ...


class ConsentWait(Protocol):
    def consent_pending(self, account: AccountConfig) -> bool:
        """Whether the account's refresh token is still the one its provider refused.
        Reads only the local secret, never the provider: called every few seconds while
        the account waits."""
        ...


class MessagePreparer(Protocol):
    """Turns fetched octets into what the store keeps. Never raises for any input: a
    malformed message is described with its defects."""

    def message(self, raw: bytes) -> NormalizedMessage: ...

    def headers(self, raw_header: bytes) -> NormalizedMessage: ...

    def expect(self, count: int) -> None:
        """About `count` messages are coming: get ready (start helpers) while they are
        fetched."""
        ...

    def start_batch(self, items: Sequence[tuple[bytes, bool]]) -> Future[list[PreparedMessage]]:
        """Begin preparing (raw, headers_only) pairs, possibly in other processes: whole
        messages are stored in the content store, durably by the time the future resolves,
        and normalized. Results come in the order given."""
        ...


class SyncStore(Protocol):
    """The store as synchronization sees it. Every method is one transaction."""

    def ensure_account(self, account: AccountConfig) -> None: ...

    def ensure_folder(self, account_id: str, mapping: FolderMapping) -> FolderRecord: ...

    def ensure_folders(
        self, account_id: str, mappings: Sequence[FolderMapping]
    ) -> list[FolderRecord]: ...

    def folder(self, folder_id: int) -> FolderRecord: ...

    def stored_uids(self, folder_id: int, uidvalidity: int) -> set[int]: ...

    def stored_flags(self, folder_id: int, uidvalidity: int) -> dict[int, FlagChange]: ...

    def add_messages(
        self,
        folder: FolderRecord,
        uidvalidity: int,
        items: Sequence[NewMessage],
        committed_at: datetime,
    ) -> int:
        """Insert messages not already present (by folder, UIDVALIDITY and UID), index them,
        place them in conversations, and record progress, all in one commit. Returns how many
        rows were new; rows already present are left alone, so a repeated batch is harmless."""
        ...

    def apply_flag_changes(
        self,
        folder_id: int,
        uidvalidity: int,
        changes: Sequence[FlagChange],
        observed_at: datetime,
    ) -> int: ...

    def remove_uids(self, folder_id: int, uidvalidity: int, uids: Iterable[int]) -> list[str]:
        """Delete rows for expunged UIDs; returns content keys no remaining row references."""
        ...

    def stale_identities(
        self, folder_id: int, uidvalidity: int
    ) -> dict[tuple[str | None, int], list[int]]:
        """Rows stored under a UIDVALIDITY other than `uidvalidity`, keyed by (Message-ID,
        size), valued by their row sequence numbers."""
        ...

    def rekey(self, folder_id: int, uidvalidity: int, pairs: Sequence[tuple[int, int]]) -> int:
        """Move rows (seq, new uid) to the new UIDVALIDITY, keeping their stored identity."""
        ...

    def drop_stale(self, folder_id: int, uidvalidity: int) -> list[str]:
        """Delete rows of any other UIDVALIDITY; returns unreferenced content keys."""
        ...

    def record_progress(
        self,
        folder_id: int,
        *,
        uidvalidity: int,
        highest_modseq: int | None,
        uid_next: int | None,
        committed_at: datetime,
        push_supported: bool | None = None,
    ) -> None: ...

    def awaiting_headroom(self, folder_id: int, uidvalidity: int) -> list[int]: ...

    def fill_content(
        self,
        folder_id: int,
        uidvalidity: int,
        uid: int,
        normalized: NormalizedMessage,
        content_key: str,
        *,
        verdict: SenderVerdict | None = None,
        authorship: AuthorshipReading | None = None,
    ) -> None:
        """Complete a row from its full MIME; clears any repair request on it. A verdict or
        a reading given replaces what the row held (see `trust_ports`)."""
        ...

    def awaiting_repair(self, folder_id: int, uidvalidity: int) -> list[int]: ...

    def holds_back(self, folder_id: int, uidvalidity: int) -> bool:
        """Whether any message awaits storage room or a repair of its content."""
        ...

    def request_repair(self, account_id: str, seq: int, reason: str) -> None:
        """Record that a row of `account_id` must have its content fetched again. Idempotent."""
        ...


class OwnerChanges(Protocol):
    """Changes asked of an account's own mailbox (flag changes a caller recorded), which the
    account's synchronization run carries to the server before it reads the folders."""

    def waiting(self, account_id: str) -> bool:
        """Whether any change of the account is still to be carried."""
        ...

    def mark(self, account_id: str) -> Hashable:
        """A reading of the account's open changes in the store that differs from an earlier
        one once a change was recorded since, by any process of the deployment."""
        ...

    def carry(self, account: AccountConfig, session: MailboxSession) -> None:
        """Issue the account's waiting changes over `session`, carrying each to an ending."""
        ...

    def listen(self, account_id: str, wake: Callable[[], None]) -> None:
        """Have `wake` called whenever a change of the account is recorded."""
        ...

    def unlisten(self, account_id: str, wake: Callable[[], None]) -> None:
        """Stop calling `wake` (the run that listened ended)."""
        ...


class ContactCollector(Protocol):
    """The contact book as synchronization feeds it: the people a committed batch of mail
    names, handed over once per batch."""

    def collect(self, seen: Sequence[SeenPerson], at: datetime) -> int:
        """Record the addresses nobody holds yet; answers how many records were written.
        Collecting the same people again adds nothing."""
        ...


class WithheldContacts(Protocol):
    """The contact book kept to what tools may read: nothing in it may be known only from
    mail in a folder withheld from tools."""

    def forget_withheld(self) -> int:
        """Take out of the book what only mail held in withheld folders supports, in one
        transaction, leaving no byte of it in the store: a collected address no visible
        folder's mail names (its record erased when it held no other), and a collected name
        only withheld mail gave (replaced by one visible mail gave, or none). Asserted
        records are never touched. Answers how many records changed; idempotent."""
        ...


class FolderVisibility(Protocol):
    """The folder rows as the configuration maps them, which is what every read is scoped
    by: a folder no mapping names any more is withheld like one mapped withheld."""

    def settle(self, account_id: str, mappings: Sequence[FolderMapping]) -> list[FolderRecord]:
        """Give the account's existing folder rows what their mapping says (alias, role,
        visibility) and withhold every row no mapping names; creates no row. Answers the
        rows that were withheld and are visible now."""
        ...

    def withhold_accounts(self, kept: Collection[str]) -> int:
        """Withhold every folder row of an account not in `kept`; answers how many."""
        ...

    def stored_participants(self, folder_id: int) -> Iterator[list[Participant]]:
        """The participants of the mail stored in the folder, a bounded batch at a time."""
        ...


class ContactBookUpkeep(ContactCollector, WithheldContacts, Protocol):
    """The contact book as settling the folders changes it."""
