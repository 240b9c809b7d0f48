"""ask_mail's use case put together over the in-memory ports (`fakes/answering.py`): two
accounts, each with an inbox, an archive and a junk folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from fakes.answering import (
    FixedSemantic,
    MemoryChatHealth,
    MemoryLedger,
    MemoryLookup,
    MemoryMailbox,
    ScriptedChat,
)
from mailfathom.app.answering.ask_mail import (
    AnsweringPorts,
    MailboxQuestionReader,
    QuestionAnswer,
    QuestionRequest,
)
from mailfathom.app.answering.availability import Availability, ChatRefusals
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.answering import (
    AnsweringConfig,
    ChatEndpoint,
    PeriodLimits,
    QuestionLimits,
)
from mailfathom.domain.folders import FolderRole

ASKER = Caller(frozenset({Permission.ASK, Permission.MAIL_READ}), "asker")
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
RECHECK_SECONDS = 60.0


@dataclass
class Clocks:
    """The wall clock periods are counted on, and the monotonic one refusals age on."""

    now: datetime = NOW
    seconds: float = 1000.0

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
        self.seconds += seconds


@dataclass
class Answering:
    chat: ScriptedChat
    mailbox: MemoryMailbox
    lookup: MemoryLookup
    ledger: MemoryLedger
    health: MemoryChatHealth
    semantic: FixedSemantic
    reader: MailboxQuestionReader
    clocks: Clocks = field(default_factory=Clocks)

    def ask(
        self,
        question: object = "What did the landlord say about the leak?",
        *,
        accounts: list[object] | None = None,
        folders: list[object] | None = None,
        caller: Caller = ASKER,
    ) -> QuestionAnswer:
        return self.reader.ask(caller, QuestionRequest(question, accounts, folders))


def mailbox() -> MemoryMailbox:
    box = MemoryMailbox()
    box.account("work", "Work Mail")
    box.account("home", "Home Mail")
    for account in ("work", "home"):
        box.folder(account, "INBOX", FolderRole.INBOX)
        box.folder(account, "Archive", FolderRole.ARCHIVE)
        box.folder(account, "Junk", FolderRole.JUNK)
    return box


def folder(box: MemoryMailbox, account: str, alias: str) -> FolderView:
    (found,) = [f for f in box.folders if f.account_id == account and f.alias == alias]
    return found


def answering(
    chat: ScriptedChat,
    *,
    box: MemoryMailbox | None = None,
    question: QuestionLimits | None = None,
    period: PeriodLimits | None = None,
    declared: bool = True,
) -> Answering:
    box = box if box is not None else mailbox()
    clocks = Clocks()
    lookup = MemoryLookup(box)
    ledger, health, semantic = MemoryLedger(), MemoryChatHealth(), FixedSemantic()
    config = AnsweringConfig(
        endpoint=ChatEndpoint("https://chat.example.test/v1", "m") if declared else None,
        question=question or QuestionLimits(),
        period=period or PeriodLimits(),
        recheck_seconds=RECHECK_SECONDS,
    )
    refusals = ChatRefusals(RECHECK_SECONDS, clock=lambda: clocks.seconds)
    reader = MailboxQuestionReader(
        AnsweringPorts(chat if declared else None, lookup, box, ledger, health),
        box.served,
        Availability(declared, semantic, refusals),
        config,
        clock=lambda: clocks.now,
    )
    return Answering(chat, box, lookup, ledger, health, semantic, reader, clocks)
