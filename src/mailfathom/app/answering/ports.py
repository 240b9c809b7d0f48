"""The ports an answering run reaches through: the chat model, the lookup of mail, what the
server can do with embeddings, and where spending and the chat endpoint's health are kept.

Every method is synchronous: a run is one use-case call on a worker thread, and it waits for
each answer before it decides what to do next.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from mailfathom.app.shared.mailbox_selection import SelectionInput
from mailfathom.app.shared.stored_mail_ports import FolderDirectory
from mailfathom.domain.access import Caller
from mailfathom.domain.answering import ChatFailure
from mailfathom.domain.authorship import AuthorshipState
from mailfathom.domain.embedding import SemanticState
from mailfathom.domain.sender_verdict import AuthorAuthentication, DeploymentTrust

# -- the chat model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for. `arguments` is the text it wrote, not yet read: nothing
    the model writes is trusted to be JSON, let alone valid arguments."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of the conversation: `system`, `user`, `assistant` (text, or the calls it
    asked for) or `tool` (the result of the call `tool_call_id` names)."""

    role: str
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A function the model may call: its name, what it is for, and the JSON Schema of its
    arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(hash=False)


@dataclass(frozen=True, slots=True)
class TokenUsage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """What one call answered: text, calls, or both, and what it cost."""

    text: str | None
    tool_calls: tuple[ToolCall, ...]
    usage: TokenUsage


class ChatUnavailable(Exception):
    """The chat provider could not answer (`failure` says why). Carries nothing the provider
    wrote: an error body can quote the request, and the request carries mail."""

    def __init__(self, failure: ChatFailure) -> None:
        super().__init__(f"the chat provider could not answer ({failure.value})")
        self.failure = failure


class ChatModel(Protocol):
    """One chat-completions endpoint and model."""

    def complete(
        self, messages: Sequence[ChatMessage], tool: ToolDefinition, *, may_call: bool
    ) -> Completion:
        """One completion of `messages`, offering `tool` (which the model may call only when
        `may_call`; a model that calls it anyway is answered by the run, not trusted).
        Raises `ChatUnavailable`. Not idempotent in cost: every call is paid for. Usage the
        provider does not report is estimated from the characters sent and received."""
        ...


# -- looking mail up --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LookupRequest:
    """One lookup, in search_emails' terms: the text and the selection it is matched in."""

    query_text: str
    selection: SelectionInput
    result_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FoundEmail:
    """One email a lookup found: what the model is shown of it (the extracts, the subject
    and the sender, all written by whoever sent it) and what a citation names."""

    stored_email_id: uuid.UUID
    account_id: str
    account_display_name: str
    folder_alias: str
    subject: str | None
    sender_address: str | None
    sender_display_name: str | None
    received_at: datetime | None
    author_authentication: AuthorAuthentication
    deployment_trust: DeploymentTrust
    authorship_state: AuthorshipState
    authorship_likelihood: float
    extracts: tuple[str, ...] = ()


class MailLookup(Protocol):
    def find(self, caller: Caller, request: LookupRequest) -> Sequence[FoundEmail]:
        """The emails search_emails answers the same request with, best first: every filter
        and bound is checked by the search itself and refused as a search refuses it
        (`Refusal`), and nothing outside the selection's scope is ever returned. Reads the
        local store only."""
        ...


class ScopeDirectory(Protocol):
    def snapshot(self) -> AbstractContextManager[FolderDirectory]:
        """The folders tools may read, as the store holds them at one moment: what a
        caller's scope is resolved in before a run starts."""
        ...


class SemanticSearch(Protocol):
    def state(self) -> SemanticState:
        """What this server can do with embeddings now, as search_emails publishes it
        (`semanticSearch`). Cheap: read at every listing of the tools."""
        ...


# -- what a run leaves behind -----------------------------------------------------------------


class AnsweringLedger(Protocol):
    """What each caller spent at the chat provider, per period, kept so that a restart does
    not give a period back. Both methods are atomic across processes."""

    def admit(self, caller: str, period_start: datetime, *, max_runs: int, max_tokens: int) -> bool:
        """Count one more run of `caller` in the period starting at `period_start`, if the
        period has counted fewer than `max_runs` runs and fewer than `max_tokens` tokens;
        answers whether it was counted. Periods that ended are forgotten."""
        ...

    def spend(self, caller: str, period_start: datetime, tokens: int) -> int:
        """Add `tokens` to what `caller` spent in the period; answers the period's total."""
        ...

    def spent(self, period_start: datetime) -> list[tuple[str, int, int]]:
        """(caller, runs, tokens) of every caller the period counted, by caller."""
        ...


class ChatHealthRecord(Protocol):
    """The health record of the chat role, which the operator reads: the failure that ended
    the latest question (its code, since when), or nothing once the endpoint answers."""

    def failed(self, failure: ChatFailure, at: datetime) -> None: ...

    def answered(self) -> None:
        """Clears the record. Costs one read when there is nothing to clear."""
        ...

    def state(self) -> tuple[ChatFailure, int, datetime] | None:
        """The failure on record, its code and since when; None while the role is healthy."""
        ...
