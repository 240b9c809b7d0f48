"""Asking the trust ports about each message a pass stores, beside its preparation.

Where this runs was chosen for the pass to stay fast. Verification is mostly waiting: a DKIM
key is a DNS answer away, so each message is verified on a small pool of threads here,
started as soon as its octets are fetched and overlapping their preparation in the worker
processes; the threads share one resolver cache, so a signing domain's key is looked up once
per process instead of once per worker. The reading of the text waits for the preparation
that extracts it and runs on the same pool. Both are collected when the batch commits, and
written in its transaction.

Verifying a DKIM signature costs about two milliseconds of CPU, more than storing the message
does, and any CPU spent in this process lengthens the pass. So a pass that brings more than
`TrustPorts.inline_messages` new messages (over its folders so far: an initial
synchronization, a large catch-up) stores its whole messages without readings, and the backfill
(`app/sync/trust_backfill.py`) reads them after the pass, at its own pace: such mail is readable
first and verified afterwards, while the few messages of an ordinary pass are read as they are
stored. A message stored by its header block alone is always read inline: without a body there
is no signature to verify, only a header to parse. `bench/initial_sync.py --verification-only`
measures what the readings add to a pass and what the backfill then takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import structlog

from mailfathom.app.sync.trust_ports import AuthorshipAssessor, SenderVerifier
from mailfathom.app.sync.types import FetchedMessage, PreparedMessage
from mailfathom.domain.authorship import AuthorshipReading
from mailfathom.domain.sender_verdict import SenderVerdict

log = structlog.get_logger("mailfathom.sync")

# Threads verifying and assessing for one pass: enough to keep several DNS questions out at
# once, few enough that the text readings do not crowd the committing thread.
TRUST_THREADS = 4
# The most new messages a pass reads inline; a pass bringing more leaves the rest to
# the backfill (at about 2.5 ms each, a quarter of a second of CPU).
INLINE_MESSAGES = 100


@dataclass(frozen=True, slots=True)
class TrustPorts:
    """The wired ports (either may be absent) and what the account trusts."""

    verifier: SenderVerifier | None = None
    assessor: AuthorshipAssessor | None = None
    trusted_authserv_ids: frozenset[str] = frozenset()
    inline_messages: int = INLINE_MESSAGES

    @property
    def wired(self) -> bool:
        return self.verifier is not None or self.assessor is not None


Readings = list[tuple[SenderVerdict | None, AuthorshipReading | None]]


class PendingTrust:
    """The readings of one batch, under way."""

    def __init__(
        self,
        verdicts: list[Future[SenderVerdict | None]] | None,
        readings: Future[list[AuthorshipReading | None]] | None,
        count: int,
    ) -> None:
        self._verdicts = verdicts
        self._readings = readings
        self._count = count

    def result(self) -> Readings:
        verdicts = [f.result() for f in self._verdicts] if self._verdicts else None
        readings = self._readings.result() if self._readings is not None else None
        return [
            (
                verdicts[i] if verdicts is not None else None,
                readings[i] if readings is not None else None,
            )
            for i in range(self._count)
        ]


class TrustStep:
    """Verifies and assesses the messages of a pass's batches on a pool of threads.

    With `whole_messages` false only messages stored by their header block are read; the
    whole ones are left without readings for the backfill."""

    def __init__(
        self, ports: TrustPorts, threads: int = TRUST_THREADS, *, whole_messages: bool = True
    ) -> None:
        self._ports = ports
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._whole = whole_messages

    @classmethod
    def for_pass(cls, ports: TrustPorts, new_messages: int) -> TrustStep:
        """The step of a folder's part of a pass that, with it, brings `new_messages`."""
        return cls(ports, whole_messages=new_messages <= ports.inline_messages)

    def _started(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="trust")
        return self._pool

    def begin(
        self, fetched: Sequence[FetchedMessage], preparing: Future[list[PreparedMessage]]
    ) -> PendingTrust:
        read = [self._whole or m.headers_only for m in fetched]
        if not any(read):
            return PendingTrust(None, None, len(fetched))
        verdicts: list[Future[SenderVerdict | None]] | None = None
        if self._ports.verifier is not None:
            verdicts = [
                self._started().submit(self.verify, m.raw, headers_only=m.headers_only)
                if read[i]
                else _answered(None)
                for i, m in enumerate(fetched)
            ]
        readings: Future[list[AuthorshipReading | None]] | None = None
        if self._ports.assessor is not None:
            readings = Future()
            preparing.add_done_callback(lambda done: self._assess_when_ready(done, readings, read))
        return PendingTrust(verdicts, readings, len(fetched))

    def _assess_when_ready(
        self,
        preparing: Future[list[PreparedMessage]],
        readings: Future[list[AuthorshipReading | None]] | None,
        read: list[bool],
    ) -> None:
        assert readings is not None
        if preparing.exception() is not None:
            # The batch itself failed and will not commit; nothing to read.
            readings.set_result([])
            return

        def run() -> None:
            readings.set_result(
                [self.assess(p) if read[i] else None for i, p in enumerate(preparing.result())]
            )

        try:
            self._started().submit(run)
        except RuntimeError:
            readings.set_result([None] * len(preparing.result()))

    def verify(self, raw: bytes, *, headers_only: bool) -> SenderVerdict | None:
        """The verifier's verdict, or None (nothing recorded) if it broke its promise not to
        raise."""
        verifier = self._ports.verifier
        if verifier is None:
            return None
        try:
            return verifier.verify(
                raw,
                headers_only=headers_only,
                trusted_authserv_ids=self._ports.trusted_authserv_ids,
            )
        except Exception as error:
            log.warning("trust.verifier_failed", error=type(error).__name__)
            return None

    def assess(self, prepared: PreparedMessage) -> AuthorshipReading | None:
        assessor = self._ports.assessor
        if assessor is None:
            return None
        normalized = prepared.normalized
        if normalized.headers_only:
            text = ""
        elif prepared.stored_text is not None:
            text = prepared.stored_text.decode("utf-8", "replace")
        else:
            text = normalized.plain_text
        try:
            return assessor.assess(normalized.subject, text)
        except Exception as error:
            log.warning("trust.assessor_failed", error=type(error).__name__)
            return None

    def readings_of(
        self, raw: bytes, prepared: PreparedMessage
    ) -> tuple[SenderVerdict | None, AuthorshipReading | None]:
        """Both readings of one whole message, in the calling thread."""
        return self.verify(raw, headers_only=False), self.assess(prepared)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _answered(value: SenderVerdict | None) -> Future[SenderVerdict | None]:
    done: Future[SenderVerdict | None] = Future()
    done.set_result(value)
    return done
