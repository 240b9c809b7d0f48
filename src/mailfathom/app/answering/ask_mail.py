"""ask_mail: an answer to a question about the local copy, naming the emails it was drawn from.

In order: the grant (`mailfathom.mail.ask`, and `mailfathom.mail.read`, since the answer is
written from mail and cites it), whether this deployment can answer now (56001), the
question (51002), the scope (the accounts and folders, resolved and refused exactly as a
listing's: 53001, 53003, 51002), the caller's period (57001), and only then the run, which
reaches the chat provider. The scope is the caller's authorization expressed as data: it is
resolved here, before the model is involved, and the run can neither name nor widen it.

The answer is cut to the configured length, the citations to the configured count, and the
reading to the configured ceiling; each cut is reported by its flag rather than refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from mailfathom.app.answering.availability import Availability
from mailfathom.app.answering.lookup import Scope, names
from mailfathom.app.answering.ports import (
    AnsweringLedger,
    ChatHealthRecord,
    ChatModel,
    ChatUnavailable,
    FoundEmail,
    MailLookup,
    ScopeDirectory,
)
from mailfathom.app.answering.run import QuestionRun, RunBounds, RunOutcome, period_spent
from mailfathom.app.shared.authorization import Permissions, require
from mailfathom.app.shared.mailbox_selection import SelectionInput, ServedAccount, resolve_selection
from mailfathom.domain import text_rules
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.answering import MAX_QUESTION_CHARACTERS, AnsweringConfig, PeriodLimits
from mailfathom.domain.authorship import AuthorshipState
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import ChatProviderFailed, Refusal
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import AuthorAuthentication, DeploymentTrust

PERMISSIONS: Permissions = frozenset({Permission.ASK, Permission.MAIL_READ})

log = structlog.get_logger("mailfathom.answering")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class QuestionRequest:
    """A question exactly as a caller wrote it; nothing here has been checked yet."""

    question: object
    accounts: Sequence[object] | None = None
    folders: Sequence[object] | None = None


@dataclass(frozen=True, slots=True)
class Citation:
    """An email the run retrieved: what lets a reader recognize it and fetch it, and what
    was established about its author. Never an extract."""

    stored_email_id: uuid.UUID
    account_id: str
    account_display_name: str
    folder_alias: str
    subject: str | None
    received_at: datetime | None
    author_authentication: AuthorAuthentication
    deployment_trust: DeploymentTrust
    authorship_state: AuthorshipState
    authorship_likelihood: float


@dataclass(frozen=True, slots=True)
class QuestionAnswer:
    answer: str
    citations: tuple[Citation, ...]
    answer_truncated: bool
    citations_truncated: bool
    retrieval_truncated: bool


@dataclass(frozen=True, slots=True)
class AnsweringPorts:
    """What the use case reaches: the chat model (None where no endpoint is declared), the
    lookup, the store the scope is resolved in, the ledger of spending and the chat role's
    health record."""

    chat: ChatModel | None
    lookup: MailLookup
    store: ScopeDirectory
    ledger: AnsweringLedger
    health: ChatHealthRecord


def _question(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "The question is blank.")
    if len(value) > MAX_QUESTION_CHARACTERS:
        raise Refusal(
            Code.FILTER_NOT_ACCEPTED,
            f"The question is longer than {MAX_QUESTION_CHARACTERS} characters.",
        )
    if not text_rules.is_body_text(value):
        raise Refusal(Code.FILTER_NOT_ACCEPTED, "The question carries a control character.")
    return value.strip()


def period_start(now: datetime, period: PeriodLimits) -> datetime:
    """The start of the fixed window `now` lies in (windows counted from the Unix epoch)."""
    epoch = int(now.timestamp())
    return datetime.fromtimestamp(epoch - epoch % period.seconds, UTC)


def _cited(email: FoundEmail) -> Citation:
    return Citation(
        stored_email_id=email.stored_email_id,
        account_id=email.account_id,
        account_display_name=email.account_display_name,
        folder_alias=email.folder_alias,
        subject=email.subject,
        received_at=email.received_at,
        author_authentication=email.author_authentication,
        deployment_trust=email.deployment_trust,
        authorship_state=email.authorship_state,
        authorship_likelihood=email.authorship_likelihood,
    )


class MailboxQuestionReader:
    def __init__(
        self,
        ports: AnsweringPorts,
        served: Sequence[ServedAccount],
        availability: Availability,
        config: AnsweringConfig,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._ports = ports
        self._served = tuple(served)
        self._availability = availability
        self._config = config
        self._clock = clock

    def available(self) -> bool:
        """Whether ask_mail is offered now (read at every listing)."""
        return self._availability.available()

    def answers_questions(self) -> bool:
        """Whether this deployment answers questions at all, as it is configured."""
        return self._availability.capable()

    def ask(self, caller: Caller, request: QuestionRequest) -> QuestionAnswer:
        require(caller, PERMISSIONS)
        self._availability.require()
        chat = self._ports.chat
        assert chat is not None  # availability requires a declared endpoint
        question = _question(request.question)
        scope, readable = self._scope(request)
        period = self._config.period
        start = period_start(self._clock(), period)
        ledger = self._ports.ledger
        if not ledger.admit(caller.label, start, max_runs=period.runs, max_tokens=period.tokens):
            log.warning("answering.period_spent", caller=caller.label)
            raise period_spent()

        def spend(tokens: int) -> bool:
            return ledger.spend(caller.label, start, tokens) < period.tokens

        bounds = RunBounds(caller, scope, readable, self._config.question, spend)
        run = QuestionRun(chat, self._ports.lookup, bounds)
        try:
            outcome = run.answer(question)
        except ChatUnavailable as failed:
            self._chat_failed(failed)
            raise ChatProviderFailed(
                failed.failure.code, "The chat provider did not answer the question."
            ) from None
        except Refusal as refused:
            self._chat_answered()
            log.warning("answering.question_spent", caller=caller.label, code=refused.code)
            raise
        self._chat_answered()
        return self._answer(outcome)

    def _scope(self, request: QuestionRequest) -> tuple[Scope, frozenset[tuple[str, str]]]:
        """The caller's accounts and folders, checked and resolved as a listing's are, and
        the (account, folder alias) pairs they read, junk never among them."""
        selection = SelectionInput(accounts=request.accounts, folders=request.folders)
        with self._ports.store.snapshot() as view:
            resolved = resolve_selection(view, self._served, selection)
        readable = frozenset(
            (f.account_id, f.alias) for f in resolved.covered if f.role is not FolderRole.JUNK
        )
        return Scope(names(request.accounts), names(request.folders)), readable

    def _chat_failed(self, failed: ChatUnavailable) -> None:
        failure = failed.failure
        log.warning("answering.chat_failed", code=failure.code, failure=failure.value)
        if failure.withholds_answering:
            self._availability.refusals.refused()
        self._ports.health.failed(failure, self._clock())

    def _chat_answered(self) -> None:
        self._availability.refusals.answered()
        self._ports.health.answered()

    def _answer(self, outcome: RunOutcome) -> QuestionAnswer:
        limits = self._config.question
        answer = outcome.answer
        retrieved = outcome.retrieved
        return QuestionAnswer(
            answer=answer[: limits.answer_characters],
            citations=tuple(_cited(e) for e in retrieved[: limits.citations]),
            answer_truncated=len(answer) > limits.answer_characters,
            citations_truncated=len(retrieved) > limits.citations,
            retrieval_truncated=outcome.retrieval_truncated,
        )
