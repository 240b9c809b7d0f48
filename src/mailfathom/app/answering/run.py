"""One answering run: a bounded loop of completions in which the model may only look mail up.

The loop ends with the model's text, which is the answer. Everything else the model writes is
a request to call a tool, and the only call ever carried out is a lookup in the caller's
scope (`lookup`); a call of any other name, or one made when no lookup may be, is answered
with a notice and nothing else happens. Retrieval happens only when the model asks.

Three bounds stop a run, each checked before the run asks the provider again: the calls one
question may make, the tokens one question may spend (57001, "this question"), and the
tokens the caller's period still holds (57001, "this period"). A final answer is never
refused for what it cost: it has already been paid for. The reading ceiling cuts rather than
refuses: once a lookup's results no longer fit it, the run marks the retrieval truncated,
tells the model, and offers no further lookup.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mailfathom.app.answering import envelope
from mailfathom.app.answering.lookup import LOOKUP_TOOL, LOOKUP_TOOL_NAME, Scope, request_of
from mailfathom.app.answering.ports import (
    ChatMessage,
    ChatModel,
    ChatUnavailable,
    FoundEmail,
    MailLookup,
    ToolCall,
)
from mailfathom.domain.access import Caller
from mailfathom.domain.answering import ChatFailure, QuestionLimits
from mailfathom.domain.codes import Code
from mailfathom.domain.errors import Refusal

QUESTION_SPENT = (
    "This question reached what one question may spend at the chat provider (its calls or "
    "its tokens) before an answer was written; a narrower question may fit."
)
PERIOD_SPENT = (
    "This caller's answering allowance for the current period is spent; asking again in "
    "the next period can succeed."
)


def period_spent() -> Refusal:
    return Refusal(Code.ANSWERING_BUDGET_SPENT, PERIOD_SPENT)


@dataclass
class RunOutcome:
    answer: str
    # Every email a lookup result showed the model, in the order the run first reached it.
    retrieved: list[FoundEmail] = field(default_factory=list)
    retrieval_truncated: bool = False


@dataclass(frozen=True, slots=True)
class RunBounds:
    """Where one run looks and how much it may read and spend. `readable` is every
    (account, folder alias) the scope reads, the junk folders left out: a lookup result
    outside it is never shown, whatever the search answered. `spend` records tokens spent
    and answers whether the caller's period still has room."""

    caller: Caller
    scope: Scope
    readable: frozenset[tuple[str, str]]
    limits: QuestionLimits
    spend: Callable[[int], bool]


class QuestionRun:
    def __init__(self, chat: ChatModel, lookup: MailLookup, bounds: RunBounds) -> None:
        self._chat = chat
        self._lookup = lookup
        self._bounds = bounds
        self._limits = bounds.limits
        self._lookups = 0
        self._mail_left = bounds.limits.mail_characters
        self._refs: dict[uuid.UUID, str] = {}
        self._outcome = RunOutcome(answer="")

    @property
    def _ceiling(self) -> bool:
        return self._outcome.retrieval_truncated

    def answer(self, question: str) -> RunOutcome:
        messages = [
            ChatMessage("system", envelope.SYSTEM_TEXT),
            ChatMessage("user", question),
        ]
        calls = 0
        tokens = 0
        while True:
            may_call = (
                calls + 1 < self._limits.provider_calls
                and not self._ceiling
                and self._lookups < self._limits.lookups
            )
            completion = self._chat.complete(messages, LOOKUP_TOOL, may_call=may_call)
            calls += 1
            tokens += completion.usage.total
            room = self._bounds.spend(completion.usage.total)
            if not completion.tool_calls:
                text = (completion.text or "").strip()
                if not text:
                    raise ChatUnavailable(ChatFailure.NO_TEXT)
                self._outcome.answer = text
                return self._outcome
            if calls >= self._limits.provider_calls or tokens >= self._limits.tokens:
                raise Refusal(Code.ANSWERING_BUDGET_SPENT, QUESTION_SPENT)
            if not room:
                raise period_spent()
            messages.append(ChatMessage("assistant", completion.text, completion.tool_calls))
            for call in completion.tool_calls:
                result = self._result(call, may_call)
                messages.append(ChatMessage("tool", result, tool_call_id=call.call_id))

    def _result(self, call: ToolCall, may_call: bool) -> str:
        if call.name != LOOKUP_TOOL_NAME:
            return envelope.notice(envelope.NO_SUCH_TOOL_NOTICE)
        if self._ceiling:
            return envelope.notice(envelope.CEILING_NOTICE)
        if self._lookups >= self._limits.lookups:
            return envelope.notice(envelope.LOOKUPS_SPENT_NOTICE)
        if not may_call:
            return envelope.notice(envelope.NO_CALL_NOW_NOTICE)
        self._lookups += 1
        number = self._lookups
        try:
            request = request_of(call.arguments, self._bounds.scope)
            found = self._lookup.find(self._bounds.caller, request)
        except Refusal as refused:
            return envelope.refusal(number, refused)
        return self._shown(number, found)

    def _shown(self, number: int, found: Sequence[FoundEmail]) -> str:
        result = envelope.LookupResult(number)
        if result.length() > self._mail_left:
            self._outcome.retrieval_truncated = True
            return envelope.notice(envelope.CEILING_NOTICE)
        readable = self._bounds.readable
        for email in found:
            if (email.account_id, email.folder_alias) not in readable:
                continue
            known = self._refs.get(email.stored_email_id)
            ref = known or f"E{len(self._refs) + 1}"
            item = envelope.repeated(ref) if known else envelope.entry(ref, email)
            if not result.fits(item, self._mail_left):
                self._outcome.retrieval_truncated = True
                break
            result.add(item)
            if known is None:
                self._refs[email.stored_email_id] = ref
                self._outcome.retrieved.append(email)
        text = result.text(cut=self._ceiling)
        self._mail_left -= len(text)
        return text
