"""Tool parameters more than one tool publishes, written once.

The fourteen filters of list_emails and search_emails are one group: a tool function takes a
parameter `selection: SelectionInput`, and `with_selection` publishes the fourteen filters in
its place and hands the function the `SelectionInput` they make up.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import BeforeValidator, Field

from mailfathom.app.shared.mailbox_selection import SelectionInput

Accounts = Annotated[
    list[str] | None,
    Field(
        description="Accounts to read, each by configured identifier (exact) or display name "
        "(any case), at most 64. Omitted: every account this deployment serves."
    ),
]
Folders = Annotated[
    list[str] | None,
    Field(
        description="Folders to read, each by alias (any case) or by role written "
        "role:Junk, at most 64. Omitted: every folder of the accounts in scope."
    ),
]
SenderAddress = Annotated[
    str | None,
    Field(description="The whole sender (From) address to require, any case; not a fragment."),
]
RecipientAddress = Annotated[
    str | None,
    Field(description="The whole To or Cc address to require, any case; not a fragment."),
]
SubjectFragment = Annotated[
    str | None,
    Field(
        description="Text the subject must contain, any case, at most 256 characters. "
        "Wildcard characters match themselves."
    ),
]


def _no_epoch_seconds(value: object) -> object:
    """A received or sent bound is an ISO 8601 date-time. Binding would read a number, or text
    spelling one, as seconds since 1970; it is refused instead."""
    if isinstance(value, int | float) or (isinstance(value, str) and _spells_number(value)):
        raise ValueError("a time bound is an ISO 8601 date-time, not a number")
    return value


def _spells_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


ReceivedOnOrAfter = Annotated[
    datetime | None,
    BeforeValidator(_no_epoch_seconds),
    Field(description="Inclusive start of the received range (ISO 8601; no zone means UTC)."),
]
ReceivedBefore = Annotated[
    datetime | None,
    BeforeValidator(_no_epoch_seconds),
    Field(description="Exclusive end of the received range (ISO 8601; no zone means UTC)."),
]
_UNDATED = " Mail without a usable Date header never matches."
SentOnOrAfter = Annotated[
    datetime | None,
    BeforeValidator(_no_epoch_seconds),
    Field(
        description="Inclusive start of the sent range, the time the Date header gives (ISO "
        "8601; no zone means UTC)." + _UNDATED
    ),
]
SentBefore = Annotated[
    datetime | None,
    BeforeValidator(_no_epoch_seconds),
    Field(
        description="Exclusive end of the sent range, the time the Date header gives (ISO "
        "8601; no zone means UTC)." + _UNDATED
    ),
]
IsRemotelySeen = Annotated[
    bool | None,
    Field(description="Require this remote \\Seen state. Reading never changes it."),
]
IsRemotelyFlagged = Annotated[
    bool | None,
    Field(description="Require this remote \\Flagged state (a mail client's star)."),
]
Keyword = Annotated[
    str | None,
    Field(description="One keyword the email must carry, matched whole in any case; 1-64."),
]
HasAttachments = Annotated[
    bool | None,
    Field(description="true: only emails with attachments; false: only emails without."),
]
IncludeJunkMail = Annotated[
    bool | None,
    Field(
        description="Whether the account's junk folder takes part. Omitted: it does not, "
        "unless a folders entry names it."
    ),
]

# Published name, its type, and the SelectionInput field it fills, in the published order.
_SELECTION: tuple[tuple[str, object, str], ...] = (
    ("accounts", Accounts, "accounts"),
    ("folders", Folders, "folders"),
    ("senderAddress", SenderAddress, "sender_address"),
    ("recipientAddress", RecipientAddress, "recipient_address"),
    ("subjectFragment", SubjectFragment, "subject_fragment"),
    ("receivedOnOrAfter", ReceivedOnOrAfter, "received_on_or_after"),
    ("receivedBefore", ReceivedBefore, "received_before"),
    ("sentOnOrAfter", SentOnOrAfter, "sent_on_or_after"),
    ("sentBefore", SentBefore, "sent_before"),
    ("isRemotelySeen", IsRemotelySeen, "is_remotely_seen"),
    ("isRemotelyFlagged", IsRemotelyFlagged, "is_remotely_flagged"),
    ("keyword", Keyword, "keyword"),
    ("hasAttachments", HasAttachments, "has_attachments"),
    ("includeJunkMail", IncludeJunkMail, "include_junk_mail"),
)
_SELECTION_PARAMETER = "selection"

Tool = Callable[..., Awaitable[CallToolResult]]


def with_selection(function: Tool) -> Tool:
    """The tool with its `selection` parameter published as the fourteen filters."""
    own = inspect.signature(function, eval_str=True)
    published: list[inspect.Parameter] = []
    for parameter in own.parameters.values():
        if parameter.name != _SELECTION_PARAMETER:
            published.append(parameter)
            continue
        published.extend(
            inspect.Parameter(
                name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=kind
            )
            for name, kind, _ in _SELECTION
        )

    @functools.wraps(function)
    async def tool(**arguments: Any) -> CallToolResult:
        chosen = {field: arguments.pop(name, None) for name, _, field in _SELECTION}
        return await function(**arguments, selection=SelectionInput(**chosen))

    tool.__signature__ = own.replace(parameters=published)  # type: ignore[attr-defined]
    return tool


# -- the sending tools ------------------------------------------------------------------

_KEY = (
    "Required. Your own identity for this message, 1 to 128 characters. Reuse it verbatim "
    "when retrying the same message: the first call's record answers and nothing more is "
    "sent. A new value is a new message."
)

IdempotencyKey = Annotated[str, Field(description=_KEY)]
ConfirmationLanguage = Annotated[
    Literal["en", "cs", "sk"],
    Field(
        description="The language of the question a person confirming the message is asked: "
        "en (English), cs (Czech) or sk (Slovak). It changes nothing about the message."
    ),
]
CopiedAddresses = Annotated[
    list[str] | None,
    Field(description="Addresses to copy, visible to every recipient. Omitted: none."),
]
BlindCopiedAddresses = Annotated[
    list[str] | None,
    Field(description="Addresses to copy without naming them to anyone. Omitted: none."),
]
HtmlAlternative = Annotated[
    str | None,
    Field(description="An HTML alternative sent beside the plain text; never blank."),
]
Identifier = Annotated[
    str,
    Field(description="Required. The outgoingEmailId a sending tool answered with."),
]
