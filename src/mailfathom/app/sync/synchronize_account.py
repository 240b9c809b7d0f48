"""Synchronizing every mapped folder of one account, once or continuously."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from mailfathom.app.shared.context_threads import context_thread
from mailfathom.app.sync.change_carrying import carry_changes
from mailfathom.app.sync.credential_waits import CredentialWaits
from mailfathom.app.sync.failure_record import FailureRecord
from mailfathom.app.sync.folder_visibility import mapped_folders
from mailfathom.app.sync.pass_activity import PassActivity
from mailfathom.app.sync.pass_outcomes import changed_anything, log_unexpected
from mailfathom.app.sync.ports import (
    ChangeWatch,
    ConsentWait,
    LoginSecrets,
    MailboxConnector,
    MailboxSession,
    OwnerChanges,
    SyncStore,
)
from mailfathom.app.sync.synchronize_folder import FolderSynchronizer, ProgressCallback
from mailfathom.app.sync.types import FolderRecord, SyncReport
from mailfathom.app.sync.work_meter import Unmetered, WorkMeter
from mailfathom.domain.config import AccountConfig, FolderMapping, SyncMode
from mailfathom.domain.errors import (
    ConsentRequired,
    LeaseLost,
    MailServerAuthError,
    SyncError,
)
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sync_failures import FOLDER_NOT_ON_SERVER, failure_code

log = structlog.get_logger("mailfathom.sync")

IDLE_SECONDS = 25 * 60  # RFC 2177 section 3: re-issue IDLE at least every 29 minutes
IDLE_SLICE = 10.0  # how long one IDLE waits before checking whether to stop
WATCH_SLICE = 0.2  # how often a watched mailbox without IDLE is looked at between polls


@dataclass(frozen=True, slots=True)
class AccountReport:
    account_id: str
    folders: tuple[SyncReport, ...]
    missing_folders: tuple[str, ...]


class AccountSynchronizer:
    def __init__(
        self,
        store: SyncStore,
        connector: MailboxConnector,
        folder_synchronizer: Callable[[AccountConfig], FolderSynchronizer],
        upkeep: Callable[[AccountConfig], None] | None = None,
        owner_changes: OwnerChanges | None = None,
        created_folders: Callable[[str], Sequence[FolderMapping]] | None = None,
        consent: ConsentWait | None = None,
        login_secrets: LoginSecrets | None = None,
        activity: PassActivity | None = None,
        failures: FailureRecord | None = None,
        idle_slice: float = IDLE_SLICE,
        meter: WorkMeter | None = None,
    ) -> None:
        self._store = store
        # How long one IDLE waits before looking whether the run is to stop (a run whose
        # lease is lost stops within one slice).
        self._idle_slice = idle_slice
        # What the process's metrics count of each pass.
        self._meter = meter if meter is not None else Unmetered()
        # Where the code a pass stopped on is written down, and cleared by one that succeeds.
        self._failures = failures
        # Held while a pass runs, so that the embedding worker yields to it.
        self._activity = activity if activity is not None else PassActivity()
        self._connector = connector
        self._folder_synchronizer = folder_synchronizer
        # Work this deployment left undone in the account's own folders (a drafts-folder
        # copy not yet appended or not yet taken out), finished before each pass reads them.
        self._upkeep = upkeep
        # Flag changes a caller recorded, issued over the run's session before it reads the
        # folders, so the pass reads back what the server then holds.
        self._owner_changes = owner_changes
        # Folders a caller had created on the account's server (organize_email), kept with
        # the configured ones.
        self._created_folders = created_folders
        # How a run whose login needs a person or an operator waits for them.
        self._waits = CredentialWaits(consent, login_secrets)

    def prepare(self, account: AccountConfig) -> list[FolderRecord]:
        self._store.ensure_account(account)
        mappings = mapped_folders(account, self._created_folders)
        return self._store.ensure_folders(account.account_id, mappings)

    def run_once(
        self,
        account: AccountConfig,
        on_folder: Callable[[SyncReport], None] | None = None,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
    ) -> AccountReport:
        """One pass over the account; once `stop` is set it ends at the next batch boundary
        (`PassStopped`)."""
        records = self.prepare(account)
        if not records:
            return AccountReport(account.account_id, (), ())
        if self._upkeep is not None:
            self._upkeep(account)
        blamed: list[BaseException] = []
        started = time.monotonic()
        try:
            session = self._connector.open(account)
            try:
                if self._owner_changes is not None:
                    self._owner_changes.carry(account, session)
                with self._activity.running():
                    report = self._pass(
                        session, account, records, on_folder, progress, blamed, stop
                    )
            finally:
                session.close()
        except Exception as error:
            if _recordable(error):
                self._meter.pass_failed(account.account_id, failure_code(error))
            if self._failures is not None and error not in blamed and _recordable(error):
                self._failures.account_failed(account.account_id, error)
            raise
        stored = sum(r.stored for r in report.folders)
        self._meter.pass_ended(account.account_id, stored, time.monotonic() - started)
        return report

    def _pass(
        self,
        session: MailboxSession,
        account: AccountConfig,
        records: list[FolderRecord],
        on_folder: Callable[[SyncReport], None] | None,
        progress: ProgressCallback | None = None,
        blamed: list[BaseException] | None = None,
        stop: threading.Event | None = None,
    ) -> AccountReport:
        existing = set(session.list_folders())
        synchronizer = self._folder_synchronizer(account)
        reports: list[SyncReport] = []
        missing: list[str] = []
        new_so_far = 0
        failures = self._failures
        for record in records:
            if record.remote_name not in existing:
                missing.append(record.alias)
                if failures is not None:
                    failures.folder_failed(
                        account.account_id, record.folder_id, FOLDER_NOT_ON_SERVER
                    )
                continue
            # The records were read when this pass began, and only this pass moves them on.
            try:
                report = synchronizer.run(
                    session, record, progress, earlier_new=new_so_far, stop=stop
                )
            except Exception as error:
                if failures is not None and blamed is not None and _recordable(error):
                    blamed.append(error)
                    failures.folder_failed(
                        account.account_id, record.folder_id, failure_code(error)
                    )
                raise
            new_so_far += report.stored
            reports.append(report)
            if on_folder:
                on_folder(report)
        if failures is not None:
            done = [r.folder_id for r in records if r.remote_name in existing]
            failures.passed(account.account_id, done)
        if missing:
            # Folder names are the owner's: only how many is logged.
            log.warning("folders.absent_on_server", count=len(missing), account=account.account_id)
        return AccountReport(account.account_id, tuple(reports), tuple(missing))

    def run_forever(self, account: AccountConfig, stop: threading.Event) -> None:
        """Keep the account current until `stop` is set.

        Push: one session per folder waits in IDLE and a change starts that folder's pass.
        Polling (or a server without IDLE): one pass over every folder per interval.
        A failed pass is logged and retried after a bounded back-off. Refused credentials
        are not retried, since they cannot succeed until an operator acts: the account's
        health says so, and the run waits for the secret to be replaced (a refused grant,
        for a new one). A secret that cannot be read is logged and read again after the
        back-off, so the account catches up once it is back.
        """
        records = self.prepare(account)
        push = account.sync_mode is SyncMode.PUSH and bool(records)
        watched = {r.folder_id for r in records}

        def watch_new_folders() -> None:
            """A folder created since the watchers started gets one of its own."""
            for record in self.prepare(account):
                if record.folder_id not in watched:
                    watched.add(record.folder_id)
                    self._watcher(account, record, stop).start()

        carrier: threading.Thread | None = None
        if self._owner_changes is not None and records:
            carrier = context_thread(
                carry_changes,
                self._opened,
                self._waits,
                account,
                self._owner_changes,
                stop,
                watch_new_folders if push else None,
                name=f"changes-{account.account_id}",
            )
            carrier.start()
        if push:
            workers = [self._watcher(account, r, stop) for r in records]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join()
        else:
            self._poll(account, stop)
        # The run ends once nothing of it still writes (a worker giving up the account's
        # lease waits for this before another may claim it).
        if carrier is not None:
            carrier.join()

    def _opened(self, account: AccountConfig) -> MailboxSession:
        """A session of the account; a failure to open one is the account's, kept as such."""
        try:
            return self._connector.open(account)
        except Exception as error:
            if _recordable(error):
                self._meter.pass_failed(account.account_id, failure_code(error))
            if self._failures is not None and _recordable(error):
                self._failures.account_failed(account.account_id, error)
            raise

    def _watcher(
        self, account: AccountConfig, record: FolderRecord, stop: threading.Event
    ) -> threading.Thread:
        return context_thread(
            self._watch_folder,
            account,
            record,
            stop,
            name=f"sync-{account.account_id}-{record.folder_id}",
        )

    def _poll(self, account: AccountConfig, stop: threading.Event) -> None:
        backoff = 5.0
        watch = self._connector.change_watch(account)
        while not stop.is_set():
            try:
                mark = watch.mark() if watch is not None else None
                self.run_once(account, stop=stop)
                backoff = 5.0
                self._wait_for_next_poll(account, stop, watch, mark)
            except LeaseLost:
                return
            except ConsentRequired:
                if not self._waits.await_consent(account, stop):
                    return
            except MailServerAuthError:
                if not self._waits.await_new_secret(account, stop):
                    return
            except Exception as error:  # a continuous run must outlive one bad pass
                if isinstance(error, SyncError):
                    log.warning("account.pass_failed", account=account.account_id, retry_in=backoff)
                else:
                    log_unexpected(error, account.account_id, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, 600.0)

    @staticmethod
    def _wait_for_next_poll(
        account: AccountConfig, stop: threading.Event, watch: ChangeWatch | None, mark: object
    ) -> None:
        """Until the polling interval is over, or sooner where the mailbox can be watched
        from outside a session and changed since the pass began."""
        if watch is None:
            stop.wait(account.poll_interval_seconds)
            return
        deadline = time.monotonic() + account.poll_interval_seconds
        while not stop.is_set() and not watch.changed_since(mark):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            stop.wait(min(WATCH_SLICE, left))

    def _watch_folder(
        self, account: AccountConfig, record: FolderRecord, stop: threading.Event
    ) -> None:
        backoff = 5.0
        synchronizer = self._folder_synchronizer(account)
        while not stop.is_set():
            try:
                session = self._opened(account)
            except ConsentRequired:
                if not self._waits.await_consent(account, stop):
                    return
                continue
            except MailServerAuthError:
                if not self._waits.await_new_secret(account, stop):
                    return
                continue
            except LeaseLost:
                return
            except Exception as error:  # the folder is watched again after the back-off
                if not isinstance(error, SyncError):
                    log_unexpected(error, account.account_id, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, 600.0)
                continue
            try:
                while not stop.is_set():
                    if self._upkeep is not None and record.role == FolderRole.DRAFTS.value:
                        self._upkeep(account)
                    started = time.monotonic()
                    with self._activity.running():
                        report = synchronizer.run(
                            session, self._store.folder(record.folder_id), stop=stop
                        )
                    elapsed = time.monotonic() - started
                    self._meter.pass_ended(account.account_id, report.stored, elapsed)
                    if self._failures is not None:
                        self._failures.passed(account.account_id, [record.folder_id])
                    backoff = 5.0
                    if changed_anything(report):
                        # Mail may have arrived while this pass ran; only a pass that found
                        # nothing new proves the folder matched the server when it began.
                        continue
                    if not session.supports_idle:
                        stop.wait(account.poll_interval_seconds)
                        continue
                    # Short IDLE slices keep `stop` responsive; a change ends the slice early.
                    waited = 0.0
                    while not stop.is_set() and waited < IDLE_SECONDS:
                        if session.wait_for_change(min(self._idle_slice, IDLE_SECONDS - waited)):
                            break
                        waited += self._idle_slice
            except LeaseLost:
                return
            except Exception as error:  # a continuous run must outlive one bad pass
                self._meter.pass_failed(account.account_id, failure_code(error))
                if self._failures is not None:
                    code = failure_code(error)
                    self._failures.folder_failed(account.account_id, record.folder_id, code)
                if not isinstance(error, SyncError):
                    log_unexpected(error, account.account_id, backoff)
                log.warning(
                    "folder.watch_failed",
                    account=account.account_id,
                    folder_id=record.folder_id,
                    role=record.role,
                    retry_in=backoff,
                )
                stop.wait(backoff)
                backoff = min(backoff * 2, 600.0)
            finally:
                session.close()


def _recordable(error: BaseException) -> bool:
    """Whether a failure is the account's to keep: a lost lease is the worker's, and the
    write that would record it is refused too."""
    return not isinstance(error, LeaseLost)
