"""Published shape of set_mail_flags: the records written, never the values asked for."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from mailfathom.entrypoints.mcp.models import Published
from mailfathom.entrypoints.mcp.untrusted import OwnText

ChangeName = Literal["set-seen", "set-flagged", "add-keywords", "remove-keywords", "set-keywords"]
ChangeState = Literal["pending", "converging", "completed", "dead-lettered"]


class RecordedChange(Published):
    change: ChangeName = Field(description="What the record changes.")
    changeRecordId: OwnText = Field(
        description="The durable record's identifier, the name log lines give the same change."
    )
    state: ChangeState = Field(
        description="pending: written, not yet carried to the mail server; converging: the "
        "synchronization run is issuing it; completed: the mailbox holds the value; "
        "dead-lettered: given up on (the message is gone, the folder keeps no such keyword, "
        "or the attempts were spent)."
    )


class FlagChangeResult(Published):
    storedEmailId: OwnText = Field(description="The email the change was recorded against.")
    accountId: OwnText = Field(description="The account whose next synchronization issues it.")
    folderAlias: OwnText = Field(description="The folder the email is in, as configured.")
    recordedChanges: list[RecordedChange] = Field(
        description="One entry per value asked for, in the order seen, flagged, keywords. A "
        "retry with the same requestId answers the same records as they stand now."
    )
