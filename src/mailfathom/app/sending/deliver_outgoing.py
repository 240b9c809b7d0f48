"""The delivery pass: offer queued sends to where they go, and write down what happened.

One attempt per claimed record. Recipients whose address belongs to a peer mailbox of this
deployment (a local account) are put into that account's inbox; everybody else is offered to
the account's submission server over one SMTP session. The record is told the moment the
message is about to be handed over: from then on a lost connection leaves the outcome
unknown, and such a send ends there rather than being offered twice.

Replies: 2xx accepts a recipient or the message; 4xx (and no connection at all) is
temporary, and the whole send waits for its next attempt, with a backoff doubling from
`retry_base_seconds`, until `max_attempts` are spent; 5xx refuses for good. Recipients a
server refused are recorded refused while the others are sent to, so nobody receives the
message twice.

Each claimed send is settled on its own: an account whose submission secret cannot be read
ends its sends at once with their own code, and an attempt that fails in a way nobody
anticipated is written down like a temporary failure (or, once the message may have been
handed over, an unknown outcome). Neither keeps the other sends of the pass under a lease.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Protocol

import structlog

from mailfathom.app.sending.ports import (
    AttemptResult,
    ClaimedSend,
    DraftCopyRemoval,
    OutboxStore,
    PeerMailboxes,
    SentFolders,
    SubmissionOutcome,
    SubmissionTransport,
)
from mailfathom.domain.codes import DeliveryCode
from mailfathom.domain.delivery_config import MailDeliveryConfig
from mailfathom.domain.errors import MailFathomError
from mailfathom.domain.outgoing import Recipient, RecipientState, Stage

log = structlog.get_logger("mailfathom.delivery")


class TransportDirectory(Protocol):
    def transport_for(self, account_id: str) -> SubmissionTransport | None:
        """The submission server of the account, or None when it declares none."""
        ...


@dataclass(frozen=True, slots=True)
class PassReport:
    """What a pass did. `due_in`: seconds from the end of the pass until the earliest send
    still queued becomes due (0 when one already is), None when nothing is queued.
    `lease_lost`: claimed sends whose outcome this worker could not write down, because its
    lease had run out (another worker takes them over) or the store refused."""

    claimed: int
    sent: int
    failed: int
    retried: int
    due_in: float | None = None
    lease_lost: int = 0


class DeliveryPass:
    def __init__(
        self,
        outbox: OutboxStore,
        transports: TransportDirectory,
        peers: PeerMailboxes,
        sent_folders: SentFolders,
        config: MailDeliveryConfig,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        worker: str | None = None,
        draft_copies: DraftCopyRemoval | None = None,
    ) -> None:
        self._outbox = outbox
        self._transports = transports
        self._peers = peers
        self._sent_folders = sent_folders
        self._config = config
        self._clock = clock
        self.worker = worker or f"worker-{uuid.uuid4().hex[:12]}"
        self._draft_copies = draft_copies

    def run_once(self, limit: int = 20, stop: threading.Event | None = None) -> PassReport:
        """Attempt the sends claimed; once `stop` is set, the sends not attempted yet are
        given back queued, due at once and their attempt uncounted, so another worker takes
        them now rather than after the lease (`MailDelivery.LeaseSeconds`) ran out."""
        now = self._clock()
        self._outbox.recover(now, now, self._config.max_attempts)
        claimed = self._outbox.claim(self.worker, now, self._config.lease_seconds, limit)
        sent = failed = retried = lost = 0
        for index, send in enumerate(claimed):
            if stop is not None and stop.is_set():
                self._give_back(claimed[index:])
                break
            result = self._settle(send)
            try:
                finished = self._outbox.finish(send.seq, self.worker, result, self._clock())
            except Exception as failure:  # the lease runs out and `recover` takes the send
                log.error("delivery.finish_failed", error_type=type(failure).__name__)
                lost += 1
                continue
            if not finished:
                log.warning("delivery.lease_lost", attempt=send.attempt_count)
                lost += 1
                continue
            log.info(
                "delivery.attempt",
                stage=result.stage.value,
                attempt=send.attempt_count,
                failure_code=result.failure_code,
            )
            if result.stage is Stage.SENT:
                self._file_copy(send)
            sent += result.stage is Stage.SENT
            failed += result.stage is Stage.FAILED
            retried += result.stage is Stage.QUEUED
        return PassReport(len(claimed), sent, failed, retried, self._due_in(), lost)

    def _give_back(self, sends: Sequence[ClaimedSend]) -> None:
        for send in sends:
            now = self._clock()
            back = AttemptResult(Stage.QUEUED, send.recipients, retry_at=now, counted=False)
            try:
                self._outbox.finish(send.seq, self.worker, back, now)
            except Exception as failure:  # the lease runs out and `recover` takes the send
                log.error("delivery.give_back_failed", error_type=type(failure).__name__)

    def _due_in(self) -> float | None:
        due = self._outbox.next_due()
        if due is None:
            return None
        return max(0.0, (due - self._clock()).total_seconds())

    def _file_copy(self, send: ClaimedSend) -> None:
        """The sender's own copy, after the send ended well; losing it loses no mail. A send
        that was a draft has its drafts-folder copy taken out in the same step, so the
        owner's folders show the message once, as sent."""
        if self._draft_copies is not None:
            self._draft_copies.remove_for_send(send.outgoing_id)
        try:
            self._sent_folders.file(send.account_id, send.mime, str(send.outgoing_id))
        except (OSError, MailFathomError) as failure:
            log.warning(
                "delivery.sent_copy_failed",
                account=send.account_id,
                error_type=type(failure).__name__,
                error_code=getattr(failure, "code", None),
            )
        except Exception as failure:  # the send is over; the copy must not stop the pass
            log.error("delivery.sent_copy_failed", error_type=type(failure).__name__)

    # -- one attempt ---------------------------------------------------------------------

    def _settle(self, send: ClaimedSend) -> AttemptResult:
        """The attempt's result, whatever happened during it."""
        handed_over: list[bool] = []
        try:
            return self._attempt(send, handed_over)
        except Exception as failure:  # one send must not hold the rest of the pass
            log.error(
                "delivery.attempt_failed_unexpectedly",
                account=send.account_id,
                error_type=type(failure).__name__,
            )
            if any(handed_over):
                return self._ended(send.recipients, DeliveryCode.OUTCOME_UNKNOWN)
            return self._retry(send, send.recipients, DeliveryCode.TEMPORARY_FAILURE)

    def _attempt(self, send: ClaimedSend, handed_over: list[bool]) -> AttemptResult:
        recipients = list(send.recipients)
        pending = [i for i, r in enumerate(recipients) if r.state is RecipientState.PENDING]
        remote: list[int] = []
        peer_failed = False
        for index in pending:
            owner = self._peers.owner_of(recipients[index].address)
            if owner is None:
                remote.append(index)
                continue
            try:
                self._peers.deliver(owner, send.mime, str(send.outgoing_id), sender=send.account_id)
                recipients[index] = replace(recipients[index], state=RecipientState.ACCEPTED)
            except OSError:
                peer_failed = True
        if remote:
            transport = self._transports.transport_for(send.account_id)
            if transport is None:
                for index in remote:
                    recipients[index] = replace(recipients[index], state=RecipientState.REFUSED)
                return self._ended(recipients, DeliveryCode.NO_ROUTE)

            def begin() -> bool:
                began = self._outbox.begin_transmission(send.seq, self.worker, self._clock())
                handed_over.append(began)
                return began

            outcome = transport.submit(
                send.envelope_from, [recipients[i].address for i in remote], send.mime, begin
            )
            return self._after_submission(send, recipients, remote, outcome)
        if peer_failed:
            return self._retry(send, recipients, DeliveryCode.PEER_DELIVERY_FAILED)
        return AttemptResult(Stage.SENT, tuple(recipients))

    def _after_submission(
        self,
        send: ClaimedSend,
        recipients: list[Recipient],
        remote: Sequence[int],
        outcome: SubmissionOutcome,
    ) -> AttemptResult:
        if outcome.secret_unreadable:
            log.error("delivery.secret_not_readable", account=send.account_id)
            for index in remote:
                recipients[index] = replace(recipients[index], state=RecipientState.REFUSED)
            return self._ended(recipients, DeliveryCode.SECRET_UNREADABLE)
        if outcome.consent_required:
            return self._wait_for_consent(send, recipients)
        if outcome.authentication_refused:
            return self._ended(recipients, DeliveryCode.NOT_AUTHENTICATED)
        if not outcome.connected:
            return self._retry(send, recipients, DeliveryCode.TEMPORARY_FAILURE)
        replies = {r.address: r for r in outcome.recipients}
        temporary = False
        for index in remote:
            reply = replies.get(recipients[index].address)
            if reply is None:
                continue
            state = recipients[index].state
            if not reply.accepted and not reply.temporary:
                state = RecipientState.REFUSED
            temporary |= reply.temporary
            recipients[index] = replace(recipients[index], state=state, last_reply_code=reply.code)
        if outcome.handed_over and outcome.data_code is None:
            return self._ended(recipients, DeliveryCode.OUTCOME_UNKNOWN)
        if outcome.handed_over and outcome.data_code is not None and outcome.data_code < 300:
            for index in remote:
                reply = replies.get(recipients[index].address)
                if reply is not None and reply.accepted:
                    recipients[index] = replace(recipients[index], state=RecipientState.ACCEPTED)
            return AttemptResult(Stage.SENT, tuple(recipients))
        if outcome.temporary or temporary:
            # Nothing was accepted for good: the whole message is offered again later.
            for index in remote:
                if recipients[index].state is not RecipientState.REFUSED:
                    recipients[index] = replace(recipients[index], state=RecipientState.PENDING)
            return self._retry(send, recipients, DeliveryCode.TEMPORARY_FAILURE)
        for index in remote:
            if recipients[index].state is RecipientState.PENDING:
                recipients[index] = replace(recipients[index], state=RecipientState.REFUSED)
        return self._ended(recipients, DeliveryCode.REFUSED_BY_SERVER)

    def _wait_for_consent(
        self, send: ClaimedSend, recipients: Sequence[Recipient]
    ) -> AttemptResult:
        """The account's grant was refused: the send stays queued, its attempt not counted,
        and is looked at again after `retry_base_seconds`. Looking costs nothing outside:
        the token cache remembers the refused grant and reads only the local secret."""
        log.warning("delivery.waiting_for_consent", account=send.account_id)
        retry_at = self._clock() + timedelta(seconds=self._config.retry_base_seconds)
        return AttemptResult(
            Stage.QUEUED,
            tuple(recipients),
            int(DeliveryCode.WAITING_FOR_CONSENT),
            retry_at,
            counted=False,
        )

    @staticmethod
    def _ended(recipients: Sequence[Recipient], code: DeliveryCode) -> AttemptResult:
        """The attempt ends for good. A send some recipient accepted (a peer mailbox, or the
        server for part of the list) was sent, with the failure on the record; one nobody
        accepted failed."""
        if any(r.state is RecipientState.ACCEPTED for r in recipients):
            return AttemptResult(Stage.SENT, tuple(recipients), int(code))
        return AttemptResult(Stage.FAILED, tuple(recipients), int(code))

    def _retry(
        self, send: ClaimedSend, recipients: Sequence[Recipient], code: DeliveryCode
    ) -> AttemptResult:
        if send.attempt_count >= self._config.max_attempts:
            return self._ended(recipients, DeliveryCode.ATTEMPTS_SPENT)
        delay = self._config.retry_base_seconds * (2 ** (send.attempt_count - 1))
        retry_at = self._clock() + timedelta(seconds=delay)
        return AttemptResult(Stage.QUEUED, tuple(recipients), int(code), retry_at)
