"""Published shapes of the drafting tools. Nothing about a draft's message appears in them: no
address, no subject, no body, no Message-ID, no MIME. As in `models`, a property with a
`default` is left out of the text while it holds that value."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import Published
from mailfathom.entrypoints.mcp.untrusted import OwnText


class DraftResult(Published):
    draftId: OwnText = Field(
        description="The draft's identifier, unchanged by edits; update_draft, delete_draft "
        "and send_draft take it."
    )
    accountId: OwnText = Field(description="The account the draft belongs to.")
    state: Literal["held", "filed"] = Field(
        description="filed: the owner's drafts folder shows this version. held: this "
        "deployment holds it but the folder does not show it yet (a later pass files it), "
        "or the account maps no drafts folder and never will."
    )
    revision: int = Field(description="The draft's version, from 1; each edit adds one.")
    recipientCount: int = Field(
        description="How many addresses the draft is addressed to across to, cc and bcc, "
        "each address once."
    )
    savedAt: datetime = Field(description="When this version was written down.")
    attachmentCount: int = Field(
        description="How many files the draft's message carries (a forward's and the ones named)."
    )
    alreadySent: bool = Field(
        default=False,
        description="true only when this save repeated an earlier identical one whose draft "
        "was already sent: no new draft was written, and outgoingEmailId names the send.",
    )
    outgoingEmailId: OwnText | None = Field(
        default=None,
        description="With alreadySent: the send the draft became, for get_outgoing_email.",
    )


class DeleteDraftResult(Published):
    draftId: OwnText = Field(description="The draft given up; it names no draft afterwards.")
    state: Literal["deleted", "copyLeftBehind", "pending"] = Field(
        description="deleted: gone, copies taken out of the drafts folder. copyLeftBehind: a "
        "copy could not be taken out (refused, or its folder is no longer the drafts folder); "
        "the owner may still see it and nothing here will touch it again. pending: the "
        "mailbox could not be reached; a later pass takes the copy out."
    )
