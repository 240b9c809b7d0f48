"""The answering slice's ports in memory: a scripted chat model, a mailbox its lookups search,
the ledger of spending and the chat role's health record.

`MemoryLookup` answers lookups as search_emails does as far as the answering tests need:
every word of the query (any case) in the subject or body, the selection checked and
resolved by the shared selection code (`resolve_selection`), the query and result limit
refused as a search refuses them, newest first. `tests/store/test_mail_lookup_contract.py`
holds it to what the adapter over the real search does."""

from __future__ import annotations

import math
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fakes.outbox import utc
from mailfathom.app.answering.envelope import encode
from mailfathom.app.answering.lookup import LOOKUP_TOOL_NAME
from mailfathom.app.answering.ports import (
    ChatMessage,
    ChatUnavailable,
    Completion,
    FoundEmail,
    LookupRequest,
    TokenUsage,
    ToolCall,
    ToolDefinition,
)
from mailfathom.app.shared.authorization import require
from mailfathom.app.shared.mailbox_selection import ServedAccount, resolve_selection
from mailfathom.app.shared.stored_mail import FolderView
from mailfathom.domain.access import Caller, Permission
from mailfathom.domain.answering import ChatFailure
from mailfathom.domain.authorship import AuthorshipState
from mailfathom.domain.codes import Code
from mailfathom.domain.embedding import SemanticState
from mailfathom.domain.errors import Refusal
from mailfathom.domain.folders import FolderRole
from mailfathom.domain.sender_verdict import AuthorAuthentication, DeploymentTrust

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

# -- the chat model -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What the scripted model answers next: text, calls, both, or a failure."""

    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    failure: ChatFailure | None = None
    tokens: int | None = None


def say(text: str, *, tokens: int | None = None) -> Turn:
    return Turn(text=text, tokens=tokens)


def lookup(tokens: int | None = None, **arguments: Any) -> Turn:
    """A turn asking for one lookup with `arguments`."""
    return calls(encode(arguments), tokens=tokens)


def calls(*arguments: str, name: str = LOOKUP_TOOL_NAME, tokens: int | None = None) -> Turn:
    """A turn asking for one call of `name` per text in `arguments`, as written."""
    return Turn(
        calls=tuple(ToolCall(f"call-{uuid.uuid4().hex[:8]}", name, text) for text in arguments),
        tokens=tokens,
    )


def fails(failure: ChatFailure) -> Turn:
    return Turn(failure=failure)


@dataclass(frozen=True)
class Asked:
    """One request the model received."""

    messages: tuple[ChatMessage, ...]
    tool: ToolDefinition
    may_call: bool

    def tool_results(self) -> list[str]:
        return [m.content or "" for m in self.messages if m.role == "tool"]


class ScriptedChat:
    """`ChatModel` answering turn by turn; once the script is spent, `then` answers every
    request (None: a request past the script fails the test). Usage is a token per four
    characters sent and written, unless a turn says otherwise."""

    def __init__(self, *turns: Turn, then: Turn | None = None) -> None:
        self._turns = list(turns)
        self._then = then
        self.asked: list[Asked] = []

    def complete(
        self, messages: Sequence[ChatMessage], tool: ToolDefinition, *, may_call: bool
    ) -> Completion:
        self.asked.append(Asked(tuple(messages), tool, may_call))
        if self._turns:
            turn = self._turns.pop(0)
        elif self._then is not None:
            turn = self._then
        else:
            raise AssertionError("the model was asked more often than the script answers")
        if turn.failure is not None:
            raise ChatUnavailable(turn.failure)
        if turn.tokens is not None:
            usage = TokenUsage(turn.tokens, 0)
        else:
            sent = sum(len(m.content or "") for m in messages)
            written = len(turn.text or "") + sum(len(c.arguments) for c in turn.calls)
            usage = TokenUsage(math.ceil(sent / 4), math.ceil(written / 4))
        return Completion(turn.text, turn.calls, usage)


# -- mail -------------------------------------------------------------------------------------


@dataclass
class HeldEmail:
    found: FoundEmail
    folder_id: int
    body: str


@dataclass
class MemoryMailbox:
    """Folders and emails a lookup searches; answers `MailboxReadStore.snapshot` as far as
    resolving a scope reads it (`readable_folders`)."""

    served: list[ServedAccount] = field(default_factory=list)
    folders: list[FolderView] = field(default_factory=list)
    emails: list[HeldEmail] = field(default_factory=list)

    def account(self, account_id: str, display_name: str | None = None) -> None:
        self.served.append(ServedAccount(account_id, display_name or account_id, "polling"))

    def folder(self, account_id: str, alias: str, role: FolderRole | None = None) -> FolderView:
        view = FolderView(len(self.folders) + 1, account_id, alias, role, T0)
        self.folders.append(view)
        return view

    def add(
        self,
        folder: FolderView,
        subject: str,
        body: str = "",
        *,
        sender: str = "sender@example.org",
        sender_name: str | None = "Sender Name",
        minutes: int = 0,
        authentication: AuthorAuthentication = AuthorAuthentication.NOT_ESTABLISHED,
    ) -> FoundEmail:
        names = {a.account_id: a.display_name for a in self.served}
        found = FoundEmail(
            stored_email_id=uuid.uuid4(),
            account_id=folder.account_id,
            account_display_name=names.get(folder.account_id, folder.account_id),
            folder_alias=folder.alias,
            subject=subject,
            sender_address=sender,
            sender_display_name=sender_name,
            received_at=T0 + timedelta(minutes=minutes),
            author_authentication=authentication,
            deployment_trust=DeploymentTrust.UNKNOWN,
            authorship_state=AuthorshipState.NOT_ASSESSED,
            authorship_likelihood=0.0,
            extracts=(body[:200],) if body else (),
        )
        self.emails.append(HeldEmail(found, folder.folder_id, body))
        return found

    def readable_folders(self, account_ids: Sequence[str]) -> list[FolderView]:
        wanted = set(account_ids)
        return sorted(
            (f for f in self.folders if f.account_id in wanted),
            key=lambda f: (f.account_id, f.alias.casefold()),
        )

    @contextmanager
    def snapshot(self) -> Iterator[MemoryMailbox]:
        yield self


class MemoryLookup:
    """`MailLookup` over a `MemoryMailbox`; `requests` records every lookup it answered."""

    def __init__(self, mailbox: MemoryMailbox) -> None:
        self._mailbox = mailbox
        self.requests: list[LookupRequest] = []

    def find(self, caller: Caller, request: LookupRequest) -> list[FoundEmail]:
        require(caller, frozenset({Permission.MAIL_READ}))
        limit = 20 if request.result_limit is None else request.result_limit
        if not 1 <= limit <= 50:
            raise Refusal(Code.RESULT_LIMIT_OUT_OF_RANGE, "The result limit must be from 1 to 50.")
        text = request.query_text
        if not text.strip() or len(text) > 512:
            raise Refusal(Code.FILTER_NOT_ACCEPTED, "The search query is blank or too long.")
        resolved = resolve_selection(self._mailbox, self._mailbox.served, request.selection)
        self.requests.append(request)
        chosen = resolved.store_filter
        if chosen is None:
            return []
        words = [w.casefold() for w in text.split()]
        sender = chosen.sender_address
        found = [
            held.found
            for held in self._mailbox.emails
            if held.folder_id in chosen.folder_ids
            and all(w in f"{held.found.subject} {held.body}".casefold() for w in words)
            and (sender is None or (held.found.sender_address or "").lower() == sender)
        ]
        found.sort(key=lambda f: f.received_at or T0, reverse=True)
        return found[:limit]


@dataclass
class FixedSemantic:
    """`SemanticSearch` answering whatever `current` is set to."""

    current: SemanticState = SemanticState.AVAILABLE

    def state(self) -> SemanticState:
        return self.current


# -- what a run leaves behind -------------------------------------------------------------


class MemoryLedger:
    """`AnsweringLedger` in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.periods: dict[tuple[str, datetime], list[int]] = {}

    def admit(self, caller: str, period_start: datetime, *, max_runs: int, max_tokens: int) -> bool:
        start = utc(period_start)
        with self._lock:
            for key in [k for k in self.periods if k[1] < start]:
                del self.periods[key]
            spent = self.periods.setdefault((caller, start), [0, 0])
            if spent[0] >= max_runs or spent[1] >= max_tokens:
                return False
            spent[0] += 1
            return True

    def spend(self, caller: str, period_start: datetime, tokens: int) -> int:
        with self._lock:
            spent = self.periods.setdefault((caller, utc(period_start)), [0, 0])
            spent[1] += tokens
            return spent[1]

    def spent(self, period_start: datetime) -> list[tuple[str, int, int]]:
        start = utc(period_start)
        with self._lock:
            return sorted((c, r, t) for (c, at), (r, t) in self.periods.items() if at == start)


class MemoryChatHealth:
    """`ChatHealthRecord` in memory: the failure on record and since when."""

    def __init__(self) -> None:
        self.record: tuple[ChatFailure, datetime] | None = None

    def failed(self, failure: ChatFailure, at: datetime) -> None:
        if self.record is None or self.record[0] is not failure:
            self.record = (failure, utc(at))

    def answered(self) -> None:
        self.record = None

    def state(self) -> tuple[ChatFailure, int, datetime] | None:
        if self.record is None:
            return None
        failure, since = self.record
        return failure, failure.code, since
